import { defineConfig } from "vitest/config";

/** Tests that measure latency under load: they run after everything else, alone. */
const QUIET = ["test/hostile/abusive-caller.test.ts"];

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
        test: {
          name: "suite",
          include: ["packages/*/src/**/*.test.ts", "codegen/src/**/*.test.ts", "examples/*/src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...QUIET],
          // Most files wait on servers, subprocesses and databases rather than on a core: on a 2-core
          // machine vitest's default (one worker) leaves the CPU idle most of the time.
          maxWorkers: Number(process.env.TOOLPACT_TEST_WORKERS ?? 3),
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
