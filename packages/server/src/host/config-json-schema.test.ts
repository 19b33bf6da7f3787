import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { configSchema, loadHostConfig } from "./config.js";
import { CONFIG_SCHEMA_ID, hostConfigJsonSchema } from "./config-json-schema.js";

const SHIPPED = fileURLToPath(new URL("../../toolpact.config.schema.json", import.meta.url));

function editorValidator(): (value: unknown) => boolean {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(SHIPPED, "utf8")) as object);
  return (value) => validate(value);
}

/** Configs on both sides of each field's rule. */
const CASES: [string, unknown][] = [
  ["empty", {}],
  ["with $schema", { $schema: "./node_modules/@toolpact/server/toolpact.config.schema.json" }],
  [
    "typical",
    {
      plugins: ["./plugins/notes"],
      database: "./data/toolpact.db",
      port: 4400,
      host: "127.0.0.1",
      actorIssuer: "https://id.example",
      publicUrl: "https://tools.example",
    },
  ],
  [
    "every section",
    {
      databaseOptions: { schema: "toolpact", poolSize: 20, connectionTimeoutMs: 1000, statementTimeoutMs: 2000 },
      limits: {
        maxBodyBytes: 2048,
        maxInputBytes: 100,
        maxInputDepth: 10,
        confirmationTtlSeconds: 300,
        drainTimeoutMs: 0,
        sessionTtlSeconds: 600,
        leaseMs: 5000,
        recoveryIntervalMs: 100,
        rateLimits: { previewsPerMinute: 5, pendingConfirmations: 2 },
      },
      retention: { activityDays: 30, confirmationHours: 0, outboxDays: 1, operationDays: 30, idempotencyHours: 24, pruneIntervalMs: 0 },
      secrets: { adminKey: "a", actorSecret: "b", signingKeys: "k:c", storageKey: "d" },
      actorJwksUrl: "https://id.example/.well-known/jwks.json",
    },
  ],
  ["a misspelt field", { plugin: [] }],
  ["a misspelt limit", { limits: { maxBodyByte: 2048 } }],
  ["a port as a string", { port: "4400" }],
  ["a port out of range", { port: 70000 }],
  ["a fractional port", { port: 80.5 }],
  ["an empty plugin folder", { plugins: [""] }],
  ["a body limit below 1 KiB", { limits: { maxBodyBytes: 100 } }],
  ["a confirmation TTL of 10 s", { limits: { confirmationTtlSeconds: 10 } }],
  ["a publicUrl that is not a URL", { publicUrl: "tools.example" }],
  ["a schema name with capitals", { databaseOptions: { schema: "Toolpact" } }],
  ["a secret left empty", { secrets: { adminKey: "" } }],
  ["an unknown secret", { secrets: { apiKey: "x" } }],
  ["negative retention", { retention: { activityDays: -1 } }],
  ["a non-object", []],
];

describe("toolpact.config.schema.json", () => {
  it("is the committed output of hostConfigJsonSchema() (regenerate: pnpm --filter @toolpact/server config-schema)", () => {
    expect(JSON.parse(readFileSync(SHIPPED, "utf8"))).toEqual(hostConfigJsonSchema());
  });

  it("is a valid 2020-12 schema with its $id, shipped and exported by the package", () => {
    expect(hostConfigJsonSchema()).toMatchObject({ $schema: "https://json-schema.org/draft/2020-12/schema", $id: CONFIG_SCHEMA_ID });
    expect(() => editorValidator()).not.toThrow();
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as { files: string[] };
    expect(pkg.files).toContain("toolpact.config.schema.json");
    expect(createRequire(import.meta.url).resolve("@toolpact/server/toolpact.config.schema.json")).toBe(SHIPPED);
  });

  it.each(CASES)("agrees with the config parser: %s", (_name, value) => {
    expect(editorValidator()(value)).toBe(configSchema.safeParse(value).success);
  });

  it("has both accepted and refused cases, so agreement means something", () => {
    const outcomes = new Set(CASES.map(([, value]) => configSchema.safeParse(value).success));
    expect(outcomes).toEqual(new Set([true, false]));
  });

  it("is what a config's $schema may point at: the loader accepts the key", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "toolpact-config-schema-"));
    try {
      writeFileSync(
        path.join(dir, "toolpact.config.json"),
        JSON.stringify({ $schema: "./node_modules/@toolpact/server/toolpact.config.schema.json", actorIssuer: "https://id.example" }),
      );
      expect((await loadHostConfig({ cwd: dir, env: {} })).actorIssuer).toBe("https://id.example");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
