import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nativeBindingProblem } from "./errors.js";
import { createSqliteStore } from "./sqlite-store.js";

const require = createRequire(import.meta.url);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "toolpact-binding-"));
  dirs.push(dir);
  return dir;
}

/**
 * better-sqlite3 as an install that skipped its build script leaves it: the JavaScript is there (and
 * loads), `bindings` is there, `build/` is not.
 */
function unbuiltDriver(): string {
  const installed = dirname(require.resolve("better-sqlite3/package.json"));
  const copy = join(tempDir(), "node_modules", "better-sqlite3");
  cpSync(join(installed, "lib"), join(copy, "lib"), { recursive: true });
  cpSync(join(installed, "package.json"), join(copy, "package.json"));
  const bindings = realpathSync(dirname(createRequire(join(installed, "package.json")).resolve("bindings/package.json")));
  mkdirSync(join(copy, "node_modules"), { recursive: true });
  symlinkSync(bindings, join(copy, "node_modules", "bindings"), "dir");
  return copy;
}

const FIX = /npm rebuild better-sqlite3.*pnpm approve-builds.*allowBuilds: \{ better-sqlite3: true \}.*pnpm rebuild better-sqlite3/;

describe("a missing native SQLite binding", () => {
  it("is named as such, with the fix for npm and for pnpm, when bindings cannot find better_sqlite3.node", () => {
    const Database = require(unbuiltDriver()) as new (path: string) => unknown;
    let thrown: unknown;
    try {
      new Database(":memory:");
    } catch (error) {
      thrown = error;
    }
    expect((thrown as Error).message).toMatch(/Could not locate the bindings file/);
    const problem = nativeBindingProblem(thrown);
    expect(problem).toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(problem?.message).toMatch(/^better-sqlite3 is installed but its native binding \(better_sqlite3\.node\) is missing/);
    expect(problem?.message).toMatch(FIX);
  });

  it('is what opening the store says, instead of "could not open the SQLite database"', async () => {
    const path = join(tempDir(), "toolpact.db");
    const error = await createSqliteStore({ path, nativeBinding: join(tempDir(), "nowhere", "better_sqlite3.node") }).then(
      () => undefined,
      (failure: unknown) => failure as Error & { code: string },
    );
    expect(error?.code).toBe("STORE_UNAVAILABLE");
    expect(error?.message).toMatch(/native binding \(better_sqlite3\.node\) is missing/);
    expect(error?.message).toMatch(FIX);
    expect(error?.message).not.toMatch(/could not open the SQLite database/);
  });

  it("leaves every other failure to the usual message", () => {
    expect(nativeBindingProblem(Object.assign(new Error("SQLITE_CANTOPEN: unable to open database file"), { code: "SQLITE_CANTOPEN" }))).toBeUndefined();
  });
});
