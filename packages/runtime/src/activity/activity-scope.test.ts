/** `activity.list` for a caller: its own calls for its actor, never what the user did through other plugins. */
import { describe, expect, it } from "vitest";
import { ASSISTANT, NOTES, TENANT, UNTRUSTED, eachTestFixture } from "../testing/fixtures.js";
import type { RuntimeFixture } from "../testing/fixtures.js";

let fx: RuntimeFixture;
eachTestFixture((made) => (fx = made));

const search = { providerId: NOTES, tool: "search-records" };

describe("a caller's activity listing", () => {
  it("shows one plugin's calls for its actor only; the tenant admin's listing stays whole", async () => {
    const viaAssistant = await fx.principal(ASSISTANT);
    const viaOther = await fx.principal(UNTRUSTED);
    const bobViaAssistant = await fx.principal(ASSISTANT, { sub: "bob" });
    for (let i = 0; i < 3; i++) await fx.runtime.execute(viaAssistant, search, { query: `mine ${i}` });
    const other = await fx.runtime.execute(viaOther, search, { query: "through another plugin" });
    await fx.runtime.execute(bobViaAssistant, search, { query: "bob's" });

    const mine = (await fx.runtime.listActivity(viaAssistant, { limit: 100 })).events;
    expect(mine).toHaveLength(3);
    expect(mine.every((event) => event.callerPluginId === ASSISTANT && event.actorUserId === "alice")).toBe(true);
    expect(mine.some((event) => event.operationId === other.operationId)).toBe(false);

    const theirs = (await fx.runtime.listActivity(viaOther, { limit: 100 })).events;
    expect(theirs.map((event) => event.operationId)).toEqual([other.operationId]);

    // Paging stays inside the caller's own events.
    const first = await fx.runtime.listActivity(viaAssistant, { limit: 2 });
    const second = await fx.runtime.listActivity(viaAssistant, { limit: 2, cursor: first.nextCursor! });
    expect([...first.events, ...second.events].map((event) => event.id)).toEqual(mine.map((event) => event.id));
    expect(second.nextCursor).toBeUndefined();

    const tenantWide = (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events.filter((event) => event.kind === "call");
    expect(tenantWide).toHaveLength(5);
  });
});
