/**
 * docs/operating.md's table of `toolpact.config.json` keys, held to the config parser `toolpact serve`
 * uses (`loadHostConfig`): for every row with bounds, the bounds themselves load and the values just
 * past them (and a fraction, for integer keys) are refused naming the key.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostError, loadHostConfig } from "../../packages/server/src/index.js";

const OPERATING = fileURLToPath(new URL("../../docs/operating.md", import.meta.url));
const HEADER = "| key | type | default | bounds | meaning |";

/** One row of the table with numeric bounds. */
interface BoundedKey {
  readonly key: string;
  readonly integer: boolean;
  /** The least value accepted; with `exclusiveMin`, values must be above it. */
  readonly min: number;
  readonly exclusiveMin: boolean;
  readonly max: number;
  /** `0, or 100 to ...`: 0 is accepted besides the range. */
  readonly zeroToo: boolean;
}

function tableRows(): string[][] {
  const text = readFileSync(OPERATING, "utf8");
  const start = text.indexOf(`${HEADER}\n`);
  if (start < 0) throw new Error(`docs/operating.md has no table starting "${HEADER}"`);
  const lines = text.slice(start).split("\n");
  const rows: string[][] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The rows whose bounds are numbers, parsed; throws for a bounds cell this test cannot read. */
function boundedKeys(rows: readonly string[][]): BoundedKey[] {
  const keys: BoundedKey[] = [];
  for (const [keyCell = "", type = "", , bounds = ""] of rows) {
    const match = /^(0, or )?(over )?(\d+) to (\d+)$/.exec(bounds);
    if (match === null) continue;
    const key = /^`([^`]+)`$/.exec(keyCell)?.[1];
    if (key === undefined) throw new Error(`docs/operating.md: a bounded row names more than one key: ${keyCell}`);
    if (type !== "integer" && type !== "number") throw new Error(`docs/operating.md: ${key} has bounds but type "${type}"`);
    keys.push({
      key,
      integer: type === "integer",
      zeroToo: match[1] !== undefined,
      exclusiveMin: match[2] !== undefined,
      min: Number(match[3]),
      max: Number(match[4]),
    });
  }
  return keys;
}

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-config-ref-"));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A config with `key` (dotted) set to `value`; PostgreSQL options come with a postgres:// database. */
function configWith(key: string, value: number): Record<string, unknown> {
  const config: Record<string, unknown> = key.startsWith("databaseOptions.") ? { database: "postgres://toolpact@127.0.0.1:5432/toolpact" } : {};
  const parts = key.split(".");
  let node = config;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts.at(-1)!] = value;
  return config;
}

/** Loads a config; resolves with the problems the host names (empty when it loads). */
async function problemsOf(config: Record<string, unknown>): Promise<string[]> {
  const file = path.join(dir, "toolpact.config.json");
  writeFileSync(file, JSON.stringify(config));
  try {
    await loadHostConfig({ cwd: dir, file, env: {} });
    return [];
  } catch (error) {
    if (!(error instanceof HostError)) throw error;
    return [error.message, ...error.details];
  }
}

describe("docs/operating.md: the bounds of every config key", () => {
  const rows = tableRows();
  const keys = boundedKeys(rows);

  it("reads the table, and every bounded row", () => {
    expect(rows.length).toBeGreaterThan(25);
    expect(keys.length).toBeGreaterThanOrEqual(20);
    const unread = rows.filter(([, , , bounds = ""]) => /^(\d|over )/.test(bounds) && !/^(0, or )?(over )?\d+ to \d+$/.test(bounds));
    expect(unread, "bounds are written as `A to B`, `over A to B` or `0, or A to B`").toEqual([]);
  });

  for (const bounded of keys) {
    it(`${bounded.key}: ${bounded.exclusiveMin ? "over " : ""}${bounded.min} to ${bounded.max}${bounded.integer ? ", integer" : ""}`, async () => {
      const { key, min, max } = bounded;
      const accepted = [max, bounded.exclusiveMin ? min + 0.5 : min, ...(bounded.zeroToo ? [0] : [])];
      for (const value of accepted) expect(await problemsOf(configWith(key, value)), `${key} = ${value}`).toEqual([]);
      const refused = [max + 1, bounded.exclusiveMin ? min : min - 1, ...(bounded.integer ? [min + 0.5] : [])];
      for (const value of refused) {
        const problems = await problemsOf(configWith(key, value));
        expect(problems.join("\n"), `${key} = ${value} should be refused`).toContain(key);
      }
    });
  }
});
