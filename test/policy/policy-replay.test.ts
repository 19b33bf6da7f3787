/**
 * `toolpact policy replay`, in process through main(argv, io), against the activity a real runtime recorded
 * in a SQLite file: calls that ran, were confirmed, or were denied by the live policy, decided again under a
 * proposed one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTestHost, TEST_CALLER_ID, TEST_TENANT_ID, type TestHost } from "@toolpact/runtime/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preloadCommands, runMain } from "../../packages/cli/src/cli-test-helpers.js";

const work = mkdtempSync(path.join(tmpdir(), "toolpact-policy-replay-"));
const database = path.join(work, "toolpact.db");
const TICKETS = "com.example.tickets";

const manifest = {
  id: TICKETS,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: ["create", "close", "delete"].map((name) => ({
    name,
    effect: "write",
    requiresConfirmation: false,
    inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false },
    outputSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false },
  })),
};

const LIVE = {
  trustedConfirmationUis: [TEST_CALLER_ID],
  rules: [
    { tools: `${TICKETS}:*`, callers: [TEST_CALLER_ID], decision: "allow" },
    { tools: `${TICKETS}:close`, decision: "confirm" },
    { tools: `${TICKETS}:delete`, decision: "deny" },
  ],
};

let host: TestHost | undefined;

beforeAll(async () => {
  await preloadCommands("policy");
  mkdirSync(path.join(work, "tickets"));
  writeFileSync(path.join(work, "tickets", "plugin.json"), JSON.stringify(manifest));
  writeFileSync(path.join(work, "toolpact.config.json"), JSON.stringify({ plugins: ["./tickets"], database }));
  host = await createTestHost({
    database,
    policy: LIVE,
    plugins: [
      {
        manifest,
        activate: (sdk) => {
          for (const name of ["create", "close", "delete"]) sdk.tools.provide(name, { execute: () => ({ ok: true }) });
        },
      },
    ],
  });
  const transport = host.transport();
  await transport.execute({ providerId: TICKETS, tool: "create" }, { id: "1" });
  const preview = await transport.preview({ providerId: TICKETS, tool: "close" }, { id: "1" });
  if (preview.confirmation.required !== true || preview.confirmation.mode !== "token") throw new Error("close should need a token confirmation");
  await transport.execute({ providerId: TICKETS, tool: "close" }, { id: "1" }, { confirmationToken: preview.confirmation.token });
  await expect(transport.execute({ providerId: TICKETS, tool: "delete" }, { id: "1" })).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  await expect(transport.execute({ providerId: TICKETS, tool: "nope" }, { id: "1" })).rejects.toMatchObject({ code: "TOOL_NOT_FOUND" });
  await host.close();
  host = undefined;
}, 180_000);

afterAll(async () => {
  await host?.close();
  rmSync(work, { recursive: true, force: true });
});

function policy(name: string, json: object): string {
  writeFileSync(path.join(work, name), JSON.stringify(json));
  return name;
}

const replay = (args: string[]) => runMain(["policy", "replay", ...args], { cwd: work, env: {} });

describe("toolpact policy replay", () => {
  it("prints nothing but the summary when the proposed policy is the live one", async () => {
    const result = await replay([policy("live.json", LIVE), "--since", "7d", "--tenant", TEST_TENANT_ID]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^toolpact policy replay: 4 calls since \S+ in 1 tenant, 0 would change; not replayed: 1 refused before the policy decided or by verification level, 0 of tools/,
    );
  });

  it("prints every call whose decision would change, old -> new with the rule, and how the old one was read", async () => {
    const proposed = policy("proposed.json", {
      rules: [
        { tools: `${TICKETS}:create`, decision: "deny" },
        { tools: `${TICKETS}:*`, callers: [TEST_CALLER_ID], decision: "allow" },
        { tools: `${TICKETS}:delete`, decision: "confirm" },
      ],
    });
    const result = await replay([proposed, "--since", "1h", "--config", "toolpact.config.json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    const changed = lines.slice(0, -1).map((line) => line.replace(/ \d{4}-\d\d-\d\dT\S+Z /, " <at> "));
    // Newest first: delete (denied), close's execute and preview (confirmed), create (ran).
    expect(changed).toEqual([
      `${TEST_TENANT_ID}  <at> execute ${TICKETS}:delete@1 from ${TEST_CALLER_ID} for test-user: deny (recorded: PERMISSION_DENIED) -> confirm (platform) by rules[2]`,
      `${TEST_TENANT_ID}  <at> execute ${TICKETS}:close@1 from ${TEST_CALLER_ID} for test-user: confirm (recorded: confirmation) -> allow by rules[1]`,
      `${TEST_TENANT_ID}  <at> preview ${TICKETS}:close@1 from ${TEST_CALLER_ID} for test-user: confirm (recorded: confirmation) -> allow by rules[1]`,
      `${TEST_TENANT_ID}  <at> execute ${TICKETS}:create@1 from ${TEST_CALLER_ID} for test-user: allow (recorded: ran) -> deny (PERMISSION_DENIED) by rules[0]`,
    ]);
    expect(lines.at(-1)).toMatch(/^toolpact policy replay: 4 calls since \S+ in 1 tenant, 4 would change;/);
  });

  it("refuses a bad --since, a missing option or an invalid policy (exit 2)", async () => {
    const live = policy("live.json", LIVE);
    expect((await replay([live, "--since", "yesterday-ish"])).stderr).toContain('--since "yesterday-ish" is not a duration');
    expect((await replay([live])).code).toBe(2);
    const bad = await replay([policy("bad.json", { rules: "all" }), "--since", "7d"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("/rules:");
    const noConfig = await replay([live, "--since", "7d", "--config", "missing.json"]);
    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toContain("missing.json");
  });
});
