/**
 * The published packages from the outside: every public workspace package is packed as `pnpm publish`
 * would pack it, and a plugin author's project in a temp folder installs the tarballs from there (npm,
 * then pnpm 10), the rest from the registry. The author validates and generates clients with the
 * installed `toolpact`, compiles a provider and a caller under strict settings on TypeScript 5.9, 6 and
 * 7, serves with the installed server (on SQLite, once pnpm may build it), and makes a confirmed write
 * and a read through the generated client. The caller's install must stay light: no native build, no
 * database driver.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { startServe } from "../integration/support/serve-process.js";
import { makeDeploymentSecrets } from "../integration/support/pg-world.js";
import { ACTOR_ISSUER, mintActorToken } from "../integration/support/tokens.js";
import { mutate, ok } from "../integration/support/wire.js";
import {
  CALLER_ID,
  PROVIDER_ID,
  runCommand,
  runOk,
  writeConsumerProject,
  writeManifestPackage,
  writeSurface,
  type CommandRun,
} from "./support/consumer-project.js";
import { installClosure, megabytes, nativeOrDatabaseFindings } from "./support/install-closure.js";
import { filesUnder, packWorkspace, readManifest, tarballProblems, typedEntryPoints, unpack, type PackedPackage } from "./support/workspace-packs.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const rootManifest = readManifest(repoRoot);
const benchManifest = readManifest(path.join(repoRoot, "bench"));

/** The three compilers a consumer may use; 6 and 7 at the versions this repository builds and benchmarks with. */
const COMPILERS = {
  "TypeScript 5.9": { alias: "typescript", spec: "~5.9.0" },
  "TypeScript 6": { alias: "typescript6", spec: `npm:typescript@${rootManifest.devDependencies!.typescript!}` },
  "TypeScript 7": { alias: "typescript7", spec: benchManifest.dependencies!.typescript7! },
} as const;

/** The provider package the test publishes: it ships the notes example's manifest as `<pkg>/plugin.json`. */
const MANIFEST_PACKAGE = "@acme/notes-tools";
/** How `toolpact validate` and `toolpact codegen` are pointed at the manifest that package ships: by the package's name. */
const MANIFEST_PACKAGE_ARG = MANIFEST_PACKAGE;

const TENANT = "acme";
const MINUTE = 60_000;

let work: string;
let packed: PackedPackage[];
/** Each packed package, unpacked: its `package/` folder, by name. */
const unpacked = new Map<string, string>();
let manifestPackageTarball: string;
let npmrc: string;

/** `file:` specs of every packed package (and the manifest package), relative to `project`. */
function tarballSpecs(project: string): Record<string, string> {
  const spec = (tarball: string) => `file:${path.relative(project, tarball)}`;
  return {
    ...Object.fromEntries(packed.map((pkg) => [pkg.name, spec(pkg.tarball)])),
    [MANIFEST_PACKAGE]: spec(manifestPackageTarball),
  };
}

/** The overrides that make every sibling package resolve to its tarball. */
function toolpactOverrides(project: string): Record<string, string> {
  const specs = tarballSpecs(project);
  return Object.fromEntries(packed.map((pkg) => [pkg.name, specs[pkg.name]!]));
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "toolpact-consumer-"));
  packed = packWorkspace(repoRoot, path.join(work, "tarballs"));
  for (const pkg of packed) unpacked.set(pkg.name, unpack(pkg.tarball, path.join(work, "unpacked", pkg.name)));
  const notesTools = path.join(work, "notes-tools");
  writeManifestPackage(notesTools, MANIFEST_PACKAGE, readFileSync(path.join(repoRoot, "examples/notes/plugin.json"), "utf8"));
  const packedName = (await runOk("npm", ["pack", "--silent", "--pack-destination", path.join(work, "tarballs")], { cwd: notesTools })).stdout.trim();
  manifestPackageTarball = path.join(work, "tarballs", packedName);
  npmrc = existsSync(path.join(repoRoot, ".npmrc")) ? readFileSync(path.join(repoRoot, ".npmrc"), "utf8") : "";
  console.log(["packed (pnpm pack):", ...packed.map((pkg) => `  ${pkg.name}@${pkg.version}  ${(pkg.tarballBytes / 1000).toFixed(1)} kB`)].join("\n"));
}, 2 * MINUTE);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the packed tarballs", () => {
  it("ship only what runs, with a license, metadata and resolvable exports", () => {
    const license = readFileSync(path.join(repoRoot, "LICENSE"), "utf8");
    const problems = packed.flatMap((pkg) => tarballProblems(unpacked.get(pkg.name)!, license));
    expect(problems).toEqual([]);
  });

  it("the client depends on the wire contract only (@toolpact/protocol, no dependencies), never on the manifest tooling", () => {
    const manifest = JSON.parse(readFileSync(path.join(unpacked.get("@toolpact/client")!, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith("@toolpact/"))).toEqual(["@toolpact/protocol"]);
    const protocol = JSON.parse(readFileSync(path.join(unpacked.get("@toolpact/protocol")!, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(protocol.dependencies ?? {}).toEqual({});
  });
});

describe("a plugin author's project, installed with npm", () => {
  let project: string;
  const toolpact = (args: readonly string[], env?: Record<string, string>) =>
    runCommand(path.join(project, "node_modules/.bin/toolpact"), args, { cwd: project, ...(env ? { env } : {}) });

  beforeAll(() => {
    project = path.join(work, "npm");
    // The reader's first command: `npm install @toolpact/client`, in a TypeScript project.
    writeConsumerProject(
      project,
      {
        packageManager: "npm",
        dependencies: { "@toolpact/client": tarballSpecs(project)["@toolpact/client"]! },
        devDependencies: { [COMPILERS["TypeScript 5.9"].alias]: COMPILERS["TypeScript 5.9"].spec },
        overrides: toolpactOverrides(project),
      },
      npmrc,
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
      const specs = tarballSpecs(project);
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
      writeSurface(project, "caller-surface.ts", entryPointsInstalled(project));
      await compileWith(project, ["TypeScript 5.9"], "tsconfig.caller.json");
    },
    2 * MINUTE,
  );

  describe("with npm install -D @toolpact/server", () => {
    beforeAll(async () => {
      // Scripts off: better-sqlite3 would compile SQLite from source here (these machines reach no prebuilt
      // binaries; minutes of both cores). The pnpm project below installs it built, from pnpm's build cache.
      const specs = tarballSpecs(project);
      await runOk("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "-D", specs["@toolpact/server"]!, specs["@toolpact/runtime"]!], {
        cwd: project,
        timeoutMs: 5 * MINUTE,
      });
    }, 6 * MINUTE);

    it(
      "the provider, the caller and every public type file compile on TypeScript 5.9, 6 and 7",
      async () => {
        writeSurface(project, "surface.ts", entryPointsInstalled(project));
        await compileWith(project, Object.keys(COMPILERS) as (keyof typeof COMPILERS)[], "tsconfig.json");
      },
      5 * MINUTE,
    );

    it(
      "toolpact serve, without better-sqlite3's native build, says so and how to build it with npm",
      explainsMissingBinding(toolpact, /npm rebuild better-sqlite3/),
      MINUTE,
    );
  });
});

describe("the same project, installed with pnpm 10", () => {
  let project: string;
  const toolpact = (args: readonly string[], env?: Record<string, string>) =>
    runCommand(path.join(project, "node_modules/.bin/toolpact"), args, { cwd: project, ...(env ? { env } : {}) });
  // CI=true makes pnpm insist on a lockfile; a reader's first install has none.
  const pnpmInstall = () => runOk("pnpm", ["install", "--no-frozen-lockfile"], { cwd: project, timeoutMs: 5 * MINUTE });

  beforeAll(async () => {
    project = path.join(work, "pnpm");
    const specs = tarballSpecs(project);
    writeConsumerProject(
      project,
      {
        packageManager: "pnpm",
        dependencies: { "@toolpact/client": specs["@toolpact/client"]! },
        devDependencies: {
          ...Object.fromEntries(["@toolpact/cli", "@toolpact/server", "@toolpact/runtime", MANIFEST_PACKAGE].map((name) => [name, specs[name]!])),
          "@types/node": "^20.19.0",
          typescript: COMPILERS["TypeScript 5.9"].spec,
        },
        overrides: toolpactOverrides(project),
      },
      npmrc,
    );
    await pnpmInstall();
  }, 6 * MINUTE);

  it("the caller's install has no native build and no database driver under pnpm's layout", () => {
    expect(nativeOrDatabaseFindings(installClosure(project, ["@toolpact/client", "@toolpact/cli"]))).toEqual([]);
  });

  it(
    "toolpact validate and codegen run, and everything compiles under pnpm's strict node_modules",
    async () => {
      expect((await toolpact(["validate", "plugin.json", MANIFEST_PACKAGE_ARG])).code).toBe(0);
      const codegen = await toolpact(["codegen", "--out", "src/generated", "plugin.json", MANIFEST_PACKAGE_ARG]);
      expect(codegen.stderr).toBe("");
      expect(codegen.code).toBe(0);
      writeSurface(project, "surface.ts", entryPointsInstalled(project));
      await runOk(process.execPath, [tscOf(project, "TypeScript 5.9"), "-p", "tsconfig.json"], { cwd: project, timeoutMs: 2 * MINUTE });
    },
    3 * MINUTE,
  );

  it(
    "toolpact serve, with better-sqlite3's build not allowed, says so and how to allow it",
    explainsMissingBinding(toolpact, /pnpm approve-builds|allowBuilds/),
    MINUTE,
  );

  it(
    "with the build allowed, toolpact serve serves the provider; the generated client previews, confirms, writes and reads",
    async () => {
      writeFileSync(path.join(project, "pnpm-workspace.yaml"), "allowBuilds:\n  better-sqlite3: true\n");
      // A fresh install links better-sqlite3 built (from pnpm's build cache once it was built on this machine).
      rmSync(path.join(project, "node_modules"), { recursive: true, force: true });
      await pnpmInstall();
      const secrets = makeDeploymentSecrets();
      writeConfig(project);
      const serve = await startServe({
        cwd: project,
        bin: path.join(project, "node_modules/@toolpact/cli/bin/toolpact.js"),
        args: ["--config", "toolpact.config.json"],
        env: secrets.env,
        timeoutMs: 30_000,
      });
      try {
        const admin = { authorization: `Bearer ${secrets.adminKey}` };
        for (const pluginId of [PROVIDER_ID, CALLER_ID]) ok(await mutate(serve.url, "admin.installPlugin", { tenantId: TENANT, pluginId }, admin));
        ok(await mutate(serve.url, "admin.setPolicy", { tenantId: TENANT, policy: TOKEN_MODE_POLICY }, admin));
        const { key } = ok<{ key: string }>(await mutate(serve.url, "admin.issuePluginKey", { tenantId: TENANT, pluginId: CALLER_ID }, admin));
        const actorToken = await mintActorToken(secrets.actorSecret, { tid: TENANT, sub: "ada", azp: CALLER_ID });

        const caller = await runOk(process.execPath, ["src/caller.js"], {
          cwd: project,
          env: { TOOLPACT_URL: serve.url, PLUGIN_KEY: key, ACTOR_TOKEN: actorToken },
        });
        const outcome = JSON.parse(caller.stdout) as { summary: string; operationId: string; items: string[]; reuse: string };
        expect(outcome).toMatchObject({ summary: 'Add "Buy milk"', items: ["Buy milk"], reuse: "CONFIRMATION_USED" });
        expect(outcome.operationId).toMatch(/\S/);
      } finally {
        serve.child.kill("SIGTERM");
      }
      expect(await serve.exited).toEqual({ code: 0, signal: null });
    },
    8 * MINUTE,
  );
});

/** The tenant's policy: the assistant may call the todo tools and is trusted to confirm them itself (token mode). */
const TOKEN_MODE_POLICY = {
  rules: [{ tools: `${PROVIDER_ID}:*`, callers: [CALLER_ID], decision: "allow" }],
  trustedConfirmationUis: [CALLER_ID],
};

/**
 * A test: `toolpact serve --dev` (SQLite) with better-sqlite3 unbuilt exits 1, naming it and the fix.
 * Skipped, and saying so, while the packed runtime names no fix at all (the runtime restructure adds them).
 */
function explainsMissingBinding(toolpact: (args: readonly string[]) => Promise<CommandRun>, fix: RegExp) {
  return async (context: TestContext) => {
    const dist = path.join(unpacked.get("@toolpact/runtime")!, "dist");
    const namesAFix = filesUnder(dist).some((file) => file.endsWith(".js") && readFileSync(path.join(dist, file), "utf8").includes("approve-builds"));
    if (!namesAFix) context.skip("skipped: this runtime does not yet explain a missing better-sqlite3 binding (the runtime restructure adds it)");
    const serve = await toolpact(["serve", "--dev"]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toMatch(/better-sqlite3/);
    expect(serve.stderr).toMatch(fix);
  };
}

/** The `tsc` of one of the compilers installed in the project. */
function tscOf(project: string, compiler: keyof typeof COMPILERS): string {
  return path.join(project, "node_modules", COMPILERS[compiler].alias, "bin", "tsc");
}

/** Runs `tsc --noEmit -p <config>` with each of `compilers`; fails listing every compiler's errors. */
async function compileWith(project: string, compilers: readonly (keyof typeof COMPILERS)[], config: string): Promise<void> {
  const failures: string[] = [];
  for (const compiler of compilers) {
    const run = await runCommand(process.execPath, [tscOf(project, compiler), "-p", config, "--noEmit"], { cwd: project, timeoutMs: 3 * MINUTE });
    if (run.code !== 0) failures.push(`${compiler} (${config}):\n${run.stdout}${run.stderr}`);
  }
  expect(failures.join("\n")).toBe("");
}

/** Every typed entry point (`@toolpact/x`, `@toolpact/x/sub`) of the published packages installed in the project. */
function entryPointsInstalled(project: string): string[] {
  return packed
    .filter((pkg) => existsSync(path.join(project, "node_modules", pkg.name, "package.json")))
    .flatMap((pkg) => typedEntryPoints(readManifest(path.join(project, "node_modules", pkg.name))).map((subpath) => pkg.name + subpath.slice(1)));
}

/** Writes the project's toolpact.config.json: the project itself is the provider plugin, `assistant/` the caller. */
function writeConfig(project: string): void {
  const config = { plugins: [".", "./assistant"], database: "./.toolpact/toolpact.db", port: 0, actorIssuer: ACTOR_ISSUER };
  writeFileSync(path.join(project, "toolpact.config.json"), `${JSON.stringify(config, null, 2)}\n`);
}
