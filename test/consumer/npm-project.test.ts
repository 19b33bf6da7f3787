/**
 * The published packages from the outside, installed with npm: a plugin author's project in a temp
 * folder installs the packed tarballs (the rest from the registry), validates and generates clients with
 * the installed `toolpact`, and compiles a provider and a caller under strict settings on TypeScript 5.9,
 * 6 and 7. The caller's install must stay light: no native build, no database driver. The same project
 * under pnpm, serving and calling, is pnpm-project.test.ts; the tarballs themselves, tarballs.test.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand, runOk, writeConsumerProject, writeSurface } from "./support/consumer-project.js";
import { installClosure, megabytes, nativeOrDatabaseFindings } from "./support/install-closure.js";
import {
  COMPILERS,
  compileWith,
  explainsMissingBinding,
  MANIFEST_PACKAGE,
  MANIFEST_PACKAGE_ARG,
  MINUTE,
  packPublishedPackages,
  type PublishedPackages,
} from "./support/published-packages.js";

let published: PublishedPackages;

beforeAll(async () => {
  published = await packPublishedPackages("consumer-npm");
}, 2 * MINUTE);

afterAll(() => published?.remove());

describe("a plugin author's project, installed with npm", () => {
  let project: string;
  const toolpact = (args: readonly string[], env?: Record<string, string>) =>
    runCommand(path.join(project, "node_modules/.bin/toolpact"), args, { cwd: project, ...(env ? { env } : {}) });

  beforeAll(() => {
    project = path.join(published.work, "npm");
    // The reader's first command: `npm install @toolpact/client`, in a TypeScript project.
    writeConsumerProject(
      project,
      {
        packageManager: "npm",
        dependencies: { "@toolpact/client": published.tarballSpecs(project)["@toolpact/client"]! },
        devDependencies: { [COMPILERS["TypeScript 5.9"].alias]: COMPILERS["TypeScript 5.9"].spec },
        overrides: published.toolpactOverrides(project),
      },
      published.npmrc,
    );
  });

  it(
    "npm install @toolpact/client: no native build, no database driver, and small",
    async () => {
      const install = await runOk("npm", ["install", "--no-audit", "--no-fund"], { cwd: project, timeoutMs: 5 * MINUTE });
      const closure = installClosure(project, ["@toolpact/client"]);
      expect(nativeOrDatabaseFindings(closure)).toEqual([]);
      expect(closure.map((pkg) => pkg.name)).not.toContain("@toolpact/server");
      const bytes = closure.reduce((sum, pkg) => sum + pkg.bytes, 0);
      const diskBytes = closure.reduce((sum, pkg) => sum + pkg.diskBytes, 0);
      const load = await runOk(
        process.execPath,
        ["--input-type=module", "-e", "const t = performance.now(); await import('@toolpact/client'); console.log((performance.now() - t).toFixed(0))"],
        { cwd: project },
      );
      // DESIGN.md: a caller project's runtime dependencies take at most 15 MB on disk.
      expect(diskBytes, "the caller install on disk").toBeLessThanOrEqual(15 * 1024 * 1024);
      console.log(
        [
          "caller runtime install (npm install @toolpact/client; @trpc/client's typescript peer is the project's own):",
          `  ${closure.length} packages, ${megabytes(bytes)} unpacked, ${megabytes(diskBytes)} on disk; ` +
            `npm install took ${(install.ms / 1000).toFixed(1)} s; import("@toolpact/client") took ${load.stdout.trim()} ms`,
          ...closure.map((pkg) => `  ${megabytes(pkg.bytes).padStart(8)}  ${pkg.name}@${pkg.version}`),
        ].join("\n"),
      );
    },
    6 * MINUTE,
  );

  it(
    "npm install -D @toolpact/cli adds the toolpact binary, still without a native build or a database driver",
    async () => {
      const specs = published.tarballSpecs(project);
      const compilers = [COMPILERS["TypeScript 6"], COMPILERS["TypeScript 7"]].map(({ alias, spec }) => `${alias}@${spec}`);
      await runOk(
        "npm",
        ["install", "--no-audit", "--no-fund", "-D", specs["@toolpact/cli"]!, specs[MANIFEST_PACKAGE]!, "@types/node@^20.19.0", ...compilers],
        {
          cwd: project,
          timeoutMs: 5 * MINUTE,
        },
      );
      const closure = installClosure(project, ["@toolpact/client", "@toolpact/cli"]);
      expect(nativeOrDatabaseFindings(closure)).toEqual([]);
      expect(closure.map((pkg) => pkg.name)).not.toContain("@toolpact/server");
      expect(existsSync(path.join(project, "node_modules/.bin/toolpact"))).toBe(true);
    },
    6 * MINUTE,
  );

  it("the manifest's $schema resolves from node_modules", () => {
    const manifest = JSON.parse(readFileSync(path.join(project, "plugin.json"), "utf8")) as { $schema: string };
    expect(existsSync(path.join(project, manifest.$schema))).toBe(true);
  });

  it(
    "toolpact validate and toolpact codegen: its own manifest, and the one a provider package ships",
    async () => {
      const validate = await toolpact(["validate", "plugin.json", MANIFEST_PACKAGE_ARG]);
      expect(validate.stderr).toBe("");
      expect(validate.stdout).toMatch(/^ok plugin\.json: com\.acme\.todo@1\.0\.0, 2 tools/m);
      expect(validate.stdout).toMatch(/^ok \S+plugin\.json: com\.example\.notes@/m);
      expect(validate.code).toBe(0);
      const codegen = await toolpact(["codegen", "--out", "src/generated", "plugin.json", MANIFEST_PACKAGE_ARG]);
      expect(codegen.stderr).toBe("");
      expect(codegen.code).toBe(0);
    },
    2 * MINUTE,
  );

  it("toolpact serve without @toolpact/server says what to install, in one line", async () => {
    const serve = await toolpact(["serve", "--dev"]);
    expect(serve.code).toBe(1);
    expect(serve.stderr.trim()).toBe(
      "toolpact serve needs @toolpact/server, which this project does not have: npm i -D @toolpact/server (pnpm add -D @toolpact/server), next to @toolpact/cli",
    );
  });

  it(
    "the caller compiles with what it installed (strict, skipLibCheck false, no dom lib)",
    async () => {
      writeSurface(project, "caller-surface.ts", published.entryPointsInstalled(project));
      await compileWith(project, ["TypeScript 5.9"], "tsconfig.caller.json");
    },
    5 * MINUTE,
  );

  describe("with npm install -D @toolpact/server", () => {
    beforeAll(async () => {
      // Scripts off: better-sqlite3 would compile SQLite from source here (these machines reach no prebuilt
      // binaries; minutes of both cores). pnpm-project.test.ts installs it built.
      const specs = published.tarballSpecs(project);
      await runOk("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "-D", specs["@toolpact/server"]!, specs["@toolpact/runtime"]!], {
        cwd: project,
        timeoutMs: 5 * MINUTE,
      });
    }, 6 * MINUTE);

    it(
      "the provider, the caller and every public type file compile on TypeScript 5.9, 6 and 7",
      async () => {
        writeSurface(project, "surface.ts", published.entryPointsInstalled(project));
        await compileWith(project, Object.keys(COMPILERS) as (keyof typeof COMPILERS)[], "tsconfig.json");
      },
      5 * MINUTE,
    );

    it(
      "toolpact serve, without better-sqlite3's native build, says so and how to build it with npm",
      explainsMissingBinding(() => published, toolpact, /npm rebuild better-sqlite3/),
      MINUTE,
    );
  });
});
