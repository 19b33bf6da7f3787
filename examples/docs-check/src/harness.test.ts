/** Control cases: the docs checks report what is wrong, so a passing docs test means something. */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { commandListProblems, type CommandFacts } from "./command-lists.js";
import { codeBlocks } from "./markdown-blocks.js";
import { outputMatches, runCommands, sessionCommands, sessionProblems } from "./shell-session.js";
import { typecheckSnippets } from "./snippet-typecheck.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const fence = "```";

describe("codeBlocks", () => {
  it("finds fenced blocks with their language, attributes and first content line", () => {
    const text = ["# Title", "", `${fence}jsonc manifest file=a.json`, "{}", fence, "text", `${fence}sh`, "$ echo hi", "hi", fence, ""].join("\n");
    expect(codeBlocks("x.md", text)).toEqual([
      { file: "x.md", line: 4, lang: "jsonc", attributes: { manifest: true, file: "a.json" }, content: "{}\n" },
      { file: "x.md", line: 8, lang: "sh", attributes: {}, content: "$ echo hi\nhi\n" },
    ]);
  });

  it("refuses an unclosed fence", () => {
    expect(() => codeBlocks("x.md", `${fence}ts\nconst a = 1;\n`)).toThrow(/x\.md:1: a code fence is never closed/);
  });
});

describe("typecheckSnippets", () => {
  it("reports a type error at the doc's line and column, and passes a correct snippet", () => {
    const text = [
      "intro",
      `${fence}ts`,
      'import { createToolClients } from "./generated/index.js";',
      "declare const tools: ReturnType<typeof createToolClients>;",
      'await tools.notes.createRecord.execute({ title: "x" }, {});',
      fence,
      `${fence}ts`,
      'const fine: string = "yes";',
      "export {};",
      fence,
    ].join("\n");
    const problems = typecheckSnippets(repoRoot, codeBlocks("docs/x.md", text));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^docs\/x\.md:5:56: TS2345: .*\n\s*Property 'confirmationToken' is missing/);
  }, 60_000);

  it("keeps snippets apart: each is its own module", () => {
    const block = (name: string) => [`${fence}ts`, `const ${name} = 1;`, `export const copy = ${name};`, fence].join("\n");
    expect(typecheckSnippets(repoRoot, codeBlocks("docs/x.md", `${block("same")}\n${block("same")}`))).toEqual([]);
  }, 60_000);
});

describe("shell sessions", () => {
  it("matches `…` within a line and a lone `…` line across any number of lines", () => {
    expect(outputMatches(["id: …, ok"], ["id: 42, ok"])).toBe(true);
    expect(outputMatches(["id: …, ok"], ["id: 42, bad"])).toBe(false);
    expect(outputMatches(["first", "…", "last"], ["first", "a", "b", "last"])).toBe(true);
    expect(outputMatches(["first", "…", "last"], ["first", "last"])).toBe(true);
    expect(outputMatches(["first", "last"], ["first", "middle", "last"])).toBe(false);
    expect(outputMatches(["a.b"], ["axb"])).toBe(false);
  });

  it("runs commands in one shell, and reports differing output and an exit code the doc does not show", async () => {
    const text = [`${fence}sh`, "$ greeting=hello", '$ echo "$greeting"', "hello", "$ echo wrong", "right", "$ false", "$ false", "$ echo $?", "1", fence].join(
      "\n",
    );
    const commands = codeBlocks("docs/x.md", text).flatMap(sessionCommands);
    const runs = await runCommands(commands, { cwd: repoRoot, env: { PATH: process.env.PATH ?? "" }, timeoutMs: 10_000 });
    expect(runs.map((run) => run.exitCode)).toEqual([0, 0, 0, 1, 1, 0]);
    const problems = sessionProblems(commands, runs);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain("docs/x.md:5: $ echo wrong");
    expect(problems[0]).toContain("it printed:\n    wrong");
    expect(problems[1]).toBe('docs/x.md:7: $ false\n  exits 1: show it with "$ echo $?" after it, or fix the command');
  });
});

describe("command lists", () => {
  const facts: CommandFacts = {
    packageManager: "pnpm@10.34.9",
    rootScripts: new Set(["demo", "test"]),
    packageScripts: new Map([["@toolpact/example-assistant", new Set(["token"])]]),
    publishedPackages: new Set(["@toolpact/client", "@toolpact/cli"]),
    cliHelp: new Map([["serve", "usage: toolpact serve [--config file] [--dev]"]]),
    knownVariables: new Set(["TOOLPACT_ADMIN_KEY"]),
    readScript: (file) => (file === "bench/run.mjs" ? 'parseArgs({ options: { full: { type: "boolean" }, only: { type: "string" } } })' : undefined),
  };
  const problemsOf = (line: string) => commandListProblems(codeBlocks("x.md", `${fence}sh\n${line}\n${fence}`)[0]!, facts);

  it("accepts what exists", () => {
    expect(problemsOf("npm i -g pnpm@10.34.9 && pnpm install && pnpm demo   # comment")).toEqual([]);
    expect(problemsOf("toolpact serve --config x.json --dev")).toEqual([]);
    expect(problemsOf("pnpm --silent --filter @toolpact/example-assistant token")).toEqual([]);
    expect(problemsOf("export TOOLPACT_ADMIN_KEY=$(openssl rand -base64 32)")).toEqual([]);
    expect(problemsOf("node bench/run.mjs --full --only durable")).toEqual([]);
    expect(problemsOf("npm install @toolpact/client && npm install -D @toolpact/cli")).toEqual([]);
    expect(problemsOf("pnpm -r publish --access public")).toEqual([]);
  });

  it("reports what does not", () => {
    expect(problemsOf("npm i -g pnpm@9.0.0")[0]).toMatch(/installs pnpm@10\.34\.9/);
    expect(problemsOf("npm install @toolpact/example-assistant")[0]).toMatch(/not a package this repository publishes/);
    expect(problemsOf("npm install")[0]).toMatch(/published packages/);
    expect(problemsOf("pnpm deploy")[0]).toMatch(/no script "deploy"/);
    expect(problemsOf("toolpact serve --verbose")[0]).toMatch(/does not mention --verbose/);
    expect(problemsOf("toolpact launch")[0]).toMatch(/no command "launch"/);
    expect(problemsOf("export SECRET=1")[0]).toMatch(/"SECRET" is not a variable/);
    expect(problemsOf("rm -rf /")[0]).toMatch(/make it a session/);
    expect(problemsOf("node bench/run.mjs --fast")[0]).toMatch(/declares no --fast option/);
    expect(problemsOf("node bench/missing.mjs")[0]).toMatch(/no script "bench\/missing\.mjs"/);
  });
});
