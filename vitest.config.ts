import { defineConfig } from "vitest/config";

/** Tests that measure latency under load: they run after everything else, alone. */
const QUIET = ["test/hostile/abusive-caller.test.ts", "test/structure/bench-guard.test.ts"];
/**
 * The release gates: a reader's project installed from the packed packages (npm and pnpm), the first
 * hour of docs/getting-started.md, and the docs' shell sessions. They are the longest files and mostly
 * wait on package managers and child processes, so they start first and the suite's files fill the
 * workers around them.
 */
const RELEASE = ["test/consumer/**/*.test.ts", "examples/docs-check/src/docs.test.ts"];
/** The packages' own tests, beside their source. */
const UNIT = ["packages/*/src/**/*.test.ts", "codegen/src/**/*.test.ts", "examples/*/src/**/*.test.ts"];
/**
 * Workers for the release gates and the suite together. Most files wait on servers, subprocesses,
 * package managers and databases rather than on a core: on a 2-core machine vitest's default (one
 * worker) leaves the CPU idle most of the time. (Projects that run together must share this number.)
 */
const WORKERS = Number(process.env.TOOLPACT_TEST_WORKERS ?? 4);

export default defineConfig({
  resolve: { conditions: ["@toolpact/source"] },
  ssr: { resolve: { conditions: ["@toolpact/source"] } },
  test: {
    reporters: ["default", ["json", { outputFile: "reports/vitest.json" }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        // Queued before the suite (same group; vitest orders a group's files by project name first).
        test: { name: "release", include: RELEASE, maxWorkers: WORKERS, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: "unit",
          include: UNIT,
          exclude: ["**/node_modules/**", ...RELEASE],
          maxWorkers: WORKERS,
          // Unit files leave no global state behind (each builds its own runtime, store and servers), so a
          // worker keeps its module graph between them: importing the packages once per worker rather than
          // once per file halves the CPU these files take.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "suite",
          include: ["test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...QUIET, ...RELEASE],
          maxWorkers: WORKERS,
          // As the unit files: each file starts its own hosts, stores and servers on free ports and closes them,
          // so a worker keeps its module graph between files (a third less CPU for this project).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "quiet", include: QUIET, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
