/**
 * The published packages from the outside, installed with pnpm 10: the plugin author's project of
 * npm-project.test.ts under pnpm's strict node_modules validates, generates and compiles; with
 * better-sqlite3's build not allowed `toolpact serve` says how to allow it; with it allowed, the
 * installed server serves the provider (on SQLite) and the generated client makes a confirmed write
 * and a read. better-sqlite3 comes built from pnpm's build cache, or from a local stand-in for the
 * prebuilt binary a reader's machine downloads (these machines reach none; compiling SQLite would take
 * minutes of both cores).
 */
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe } from "../integration/support/serve-process.js";
import { makeDeploymentSecrets } from "../integration/support/pg-world.js";
import { ACTOR_ISSUER, mintActorToken } from "../integration/support/tokens.js";
import { mutate, ok } from "../integration/support/wire.js";
import { CALLER_ID, PROVIDER_ID, runCommand, runOk, writeConsumerProject, writeSurface } from "./support/consumer-project.js";
import { installClosure, nativeOrDatabaseFindings } from "./support/install-closure.js";
import { localSqlitePrebuild } from "./support/local-registry.js";
import {
  COMPILERS,
  explainsMissingBinding,
  MANIFEST_PACKAGE,
  MANIFEST_PACKAGE_ARG,
  MINUTE,
  packPublishedPackages,
  repoRoot,
  tscOf,
  type PublishedPackages,
} from "./support/published-packages.js";

const TENANT = "acme";

let published: PublishedPackages;

beforeAll(async () => {
  published = await packPublishedPackages("consumer-pnpm");
  // prebuild-install finds its settings in a .prebuild-installrc of any folder above the one it installs in.
  const prebuild = localSqlitePrebuild(repoRoot, path.join(published.work, "prebuilds"));
  writeFileSync(path.join(published.work, ".prebuild-installrc"), `local-prebuilds=${prebuild.dir}\n`);
}, 2 * MINUTE);

afterAll(() => published?.remove());

describe("the same project, installed with pnpm 10", () => {
  let project: string;
  const toolpact = (args: readonly string[], env?: Record<string, string>) =>
    runCommand(path.join(project, "node_modules/.bin/toolpact"), args, { cwd: project, ...(env ? { env } : {}) });
  // CI=true makes pnpm insist on a lockfile; a reader's first install has none.
  const pnpmInstall = () => runOk("pnpm", ["install", "--no-frozen-lockfile"], { cwd: project, timeoutMs: 5 * MINUTE });

  beforeAll(async () => {
    project = path.join(published.work, "pnpm");
    const specs = published.tarballSpecs(project);
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
        overrides: published.toolpactOverrides(project),
      },
      published.npmrc,
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
      writeSurface(project, "surface.ts", published.entryPointsInstalled(project));
      await runOk(process.execPath, [tscOf(project, "TypeScript 5.9"), "-p", "tsconfig.json"], { cwd: project, timeoutMs: 4 * MINUTE });
    },
    6 * MINUTE,
  );

  it(
    "toolpact serve, with better-sqlite3's build not allowed, says so and how to allow it",
    explainsMissingBinding(() => published, toolpact, /pnpm approve-builds|allowBuilds/),
    MINUTE,
  );

  it(
    "with the build allowed, toolpact serve serves the provider; the generated client previews, confirms, writes and reads",
    async () => {
      writeFileSync(path.join(project, "pnpm-workspace.yaml"), "allowBuilds:\n  better-sqlite3: true\n");
      // A fresh install links better-sqlite3 built (pnpm's build cache, or the local prebuild set up above).
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

/** Writes the project's toolpact.config.json: the project itself is the provider plugin, `assistant/` the caller. */
function writeConfig(project: string): void {
  const config = { plugins: [".", "./assistant"], database: "./.toolpact/toolpact.db", port: 0, actorIssuer: ACTOR_ISSUER };
  writeFileSync(path.join(project, "toolpact.config.json"), `${JSON.stringify(config, null, 2)}\n`);
}
