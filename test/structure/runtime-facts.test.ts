/**
 * One home per fact (issue 25): each fact below is written once and the others derive from it. This file
 * fails when a second copy appears, naming the file and the line: the states an operation or confirmation
 * request goes through, the confirmation binding, retention and pool defaults, honest statement names,
 * and the policy, run and recovery shapes the router used to check a second time.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { POSTGRES_POOL_DEFAULTS, RETENTION_DEFAULTS } from "@toolpact/runtime";
import { S } from "../../packages/runtime/src/store/postgres/statements.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Every non-test TypeScript source under packages/<pkg>/src, as [repo-relative path, text]. */
function sources(): [string, string][] {
  const found: [string, string][] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name !== "node_modules" && name !== "dist") walk(full);
      } else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) {
        found.push([path.relative(root, full), readFileSync(full, "utf8")]);
      }
    }
  };
  for (const pkg of readdirSync(path.join(root, "packages"))) {
    const src = path.join(root, "packages", pkg, "src");
    if (statSync(src, { throwIfNoEntry: false })?.isDirectory()) walk(src);
  }
  return found;
}

/** `file:line: text` of every line matching `pattern` outside the files `home` allows. */
function copies(pattern: RegExp, home: (file: string) => boolean): string[] {
  const found: string[] = [];
  for (const [file, text] of sources()) {
    if (home(file)) continue;
    text.split("\n").forEach((line, index) => {
      if (pattern.test(line)) found.push(`${file}:${index + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe("state enums live in @toolpact/protocol (states.ts)", () => {
  const STATES_HOME = (file: string) => file === "packages/protocol/src/states.ts";

  it("no other source lists operation states", () => {
    // a list or a union of two or more of them in code (SQL's CHECKs are compared by schema-parity.test.ts)
    expect(copies(/"(running|succeeded)"\s*[,|]\s*"(succeeded|failed)"/, STATES_HOME)).toEqual([]);
  });

  it("no other source lists confirmation states", () => {
    expect(copies(/"pending"\s*[,|]\s*"approved"\s*[,|]\s*"denied"/, STATES_HOME)).toEqual([]);
  });
});

describe("the confirmation binding has one shape", () => {
  it("token claims are mapped from a bound call only through BOUND_CALL_CLAIMS", () => {
    expect(copies(/\b(tid|sub|cpl|prv|tol|ver|sch|eff|run):\s*(bound|binding|approved|call)\./, () => false)).toEqual([]);
  });

  it("findOpenConfirmation's conditions are built from CONFIRMATION_BINDING_COLUMNS, not written per store", () => {
    expect(copies(/\bdigest_kid\s*=\s*[?$]/, () => false)).toEqual([]);
  });
});

describe("defaults have one home each", () => {
  it("the runtime fills retention defaults only from RETENTION_DEFAULTS", () => {
    expect(copies(/retention\?\.\w+\s*\?\?\s*\d/, () => false)).toEqual([]);
  });

  it("the PostgreSQL store fills pool defaults only from POSTGRES_POOL_DEFAULTS", () => {
    expect(copies(/positive\("\w+",\s*options\.\w+,\s*\d/, () => false)).toEqual([]);
  });

  it("the host config schema quotes the defaults instead of restating them", () => {
    const config = readFileSync(path.join(root, "packages/server/src/host/config.ts"), "utf8");
    expect(config).not.toMatch(/\(default (90|24|7|10|2000|1500)\)\."/);
  });

  it("docs/operating.md's table states the same defaults", () => {
    const doc = readFileSync(path.join(root, "docs/operating.md"), "utf8");
    const row = (key: string) => new RegExp(`^\\| \`${key.replace(".", "\\.")}\` \\| \\w+ \\| ([^|]+) \\|`, "m").exec(doc)?.[1]?.trim();
    for (const [key, value] of Object.entries(RETENTION_DEFAULTS)) expect(row(`retention.${key}`), key).toBe(String(value));
    for (const [key, value] of Object.entries(POSTGRES_POOL_DEFAULTS)) expect(row(`databaseOptions.${key}`), key).toBe(String(value));
  });
});

describe("statement names say what the statement does", () => {
  it("every PostgreSQL statement is named after its key (toolpact_<snake_case key>)", () => {
    const wrong = Object.entries(S)
      .filter(([key, statement]) => statement.name !== `toolpact_${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`)
      .map(([key, statement]) => `${key} -> ${statement.name}`);
    expect(wrong).toEqual([]);
  });
});

describe("policy, run and recovery shapes are validated once, in the runtime", () => {
  it("the router does not restate them in zod", () => {
    const router = readFileSync(path.join(root, "packages/server/src/router.ts"), "utf8");
    for (const restated of [/decision:\s*z\./, /retry:\s*z\./, /ttlSeconds:\s*z\./, /allow:\s*z\./, /trustedConfirmationUis:\s*z\./]) {
      expect(router, String(restated)).not.toMatch(restated);
    }
  });

  it("the runtime checks tool patterns through one function", () => {
    expect(copies(/TOOL_PATTERN\.test\(/, (file) => file === "packages/runtime/src/permission-policy.ts")).toEqual([]);
  });
});
