import { describe, expect, it } from "vitest";
import { ProtocolError } from "@modelcontextprotocol/server";
import type { ToolListing } from "@toolpact/runtime";
import { describeTool, listPage } from "./tool-listing.js";
import { createToolDirectory } from "./tool-names.js";

function tool(name: string, extra: Partial<ToolListing> = {}): ToolListing {
  return {
    providerId: "com.example.notes",
    alias: "notes",
    name,
    version: 1,
    fullName: `com.example.notes:${name}@1`,
    effect: "read",
    requiresConfirmation: false,
    minVerificationLevel: 0,
    inputSchema: { type: "object" },
    ...extra,
  };
}

describe("tools/list", () => {
  it("pages by the last name shown, so removed tools do not shift the next page", () => {
    const all = ["a", "b", "c", "d", "e"].map((name) => tool(name));
    const first = listPage(createToolDirectory(all), undefined, 2);
    expect(first.tools.map((t) => t.name)).toEqual(["com-example-notes_a", "com-example-notes_b"]);
    const shrunk = createToolDirectory(all.filter((t) => t.name !== "a" && t.name !== "c"));
    const second = listPage(shrunk, first.nextCursor, 2);
    expect(second.tools.map((t) => t.name)).toEqual(["com-example-notes_d", "com-example-notes_e"]);
    expect(second.nextCursor).toBeUndefined();
  });

  it("refuses a cursor it did not make", () => {
    const directory = createToolDirectory([tool("a")]);
    for (const cursor of ["", "not base64!", Buffer.from("before:x").toString("base64url")]) {
      expect(() => listPage(directory, cursor, 10)).toThrow(ProtocolError);
    }
  });

  it("leaves out an outputSchema whose root is not an object (MCP requires one)", () => {
    expect(describeTool("x", tool("x", { outputSchema: { type: "array" } })).outputSchema).toBeUndefined();
    expect(describeTool("x", tool("x", { outputSchema: { oneOf: [{ type: "object" }] } })).outputSchema).toBeUndefined();
    expect(describeTool("x", tool("x", { outputSchema: { type: "object", required: ["id"] } })).outputSchema).toEqual({ type: "object", required: ["id"] });
  });

  it("marks an external tool open-world, and says a confirmed one waits for the user", () => {
    const described = describeTool("mailer_send", tool("send", { effect: "external", requiresConfirmation: true, description: "Sends mail." }));
    expect(described.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, openWorldHint: true });
    expect(described.description).toBe(
      "Sends mail.\n\n(com.example.notes:send@1: acts outside this platform; each call waits for the user to approve it on toolpact's confirmation page)",
    );
  });
});
