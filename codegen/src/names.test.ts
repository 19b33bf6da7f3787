import { describe, expect, it } from "vitest";
import { manifestOf } from "./fixtures.test-support.js";
import { kebabCase, planProviders } from "./names.js";

const tool = (name: string, version = 1) => ({ name, version, effect: "read" as const, inputSchema: { type: "object" } });
const plugin = (id: string, tools: ReturnType<typeof tool>[], alias?: string) =>
  manifestOf({ id, version: "1.0.0", permissions: ["tools:provide"], tools, ...(alias ? { alias } : {}) });

describe("planProviders", () => {
  it("names providers by alias, else the last id segment camelCased, sorted by client name", () => {
    const plans = planProviders([plugin("com.example.notes", [tool("a")]), plugin("com.acme.mail-relay", [tool("a")]), plugin("org.x.y", [tool("a")], "zeta")]);
    expect(plans.map((p) => [p.clientName, p.namespace, p.file, p.clientInterface, p.clientFactory, p.defineFunction, p.handlersInterface])).toEqual([
      ["mailRelay", "MailRelay", "mail-relay.ts", "MailRelayClient", "createMailRelayClient", "defineMailRelayProvider", "MailRelayProviderHandlers"],
      ["notes", "Notes", "notes.ts", "NotesClient", "createNotesClient", "defineNotesProvider", "NotesProviderHandlers"],
      ["zeta", "Zeta", "zeta.ts", "ZetaClient", "createZetaClient", "defineZetaProvider", "ZetaProviderHandlers"],
    ]);
  });

  it("gives the plain method to the highest version and a V<n> method to every version", () => {
    const [plan] = planProviders([plugin("com.example.notes", [tool("create-record", 3), tool("list"), tool("create-record", 1)])]);
    expect(plan!.members.map((m) => [m.name, m.tool.fullName, m.isLatestAlias])).toEqual([
      ["createRecord", "com.example.notes:create-record@3", true],
      ["createRecordV1", "com.example.notes:create-record@1", false],
      ["createRecordV3", "com.example.notes:create-record@3", false],
      ["list", "com.example.notes:list@1", false],
    ]);
    expect(plan!.tools.map((t) => [t.key, t.inputType, t.outputType, t.descriptorName])).toEqual([
      ["createRecordV1", "CreateRecordV1Input", undefined, "createRecordV1Descriptor"],
      ["createRecordV3", "CreateRecordV3Input", undefined, "createRecordV3Descriptor"],
      ["list", "ListInput", undefined, "listDescriptor"],
    ]);
  });

  it("skips manifests that declare no tools", () => {
    expect(planProviders([manifestOf({ id: "com.example.caller", version: "1.0.0", permissions: ["tools:call"] })])).toEqual([]);
  });

  it("refuses two providers with one client name, naming both", () => {
    expect(() => planProviders([plugin("com.a.notes", [tool("x")]), plugin("com.b.notes", [tool("x")])])).toThrowErrorMatchingInlineSnapshot(
      `[ToolpactError: plugin com.a.notes and plugin com.b.notes both need the name "notes" in the generated clients object: give one of them an "alias" in its manifest]`,
    );
    expect(() => planProviders([plugin("com.a.notes", [tool("x")]), plugin("com.b.memo", [tool("x")], "notes")])).toThrow(
      /plugin com\.b\.memo and plugin com\.a\.notes|plugin com\.a\.notes and plugin com\.b\.memo/,
    );
  });

  it("refuses two tools that map to one method, naming both", () => {
    expect(() =>
      planProviders([plugin("com.example.notes", [tool("create-record", 1), tool("create-record", 2), tool("create-record-v1")])]),
    ).toThrowErrorMatchingInlineSnapshot(
      `[ToolpactError: tool "create-record" version 1 and tool "create-record-v1" version 1 both need the name "createRecordV1" in the client of com.example.notes: rename one of the tools]`,
    );
    expect(() => planProviders([plugin("com.example.notes", [tool("a-1"), tool("a1")])])).toThrow(
      /tool "a-1" version 1 and tool "a1" version 1 both need the name "a1"/,
    );
  });

  it("refuses names that collide in the index or the output folder", () => {
    expect(() => planProviders([plugin("com.example.notes", [tool("x")]), plugin("com.example.other", [tool("x")], "notesClient")])).toThrow(
      /plugin com\.example\.notes and plugin com\.example\.other both need the name "NotesClient" in the generated index\.ts/,
    );
    expect(() => planProviders([plugin("com.example.index", [tool("x")])])).toThrow(
      /the generated index and plugin com\.example\.index both need the name "index\.ts"/,
    );
    expect(() => planProviders([plugin("com.example.x", [tool("x")], "toolClients")])).toThrow(
      /codegen itself and plugin com\.example\.x both need the name "ToolClients"/,
    );
  });

  it("refuses a client name that would shadow a JavaScript built-in (a `then` would make the clients object a thenable)", () => {
    expect(() => planProviders([plugin("com.example.then", [tool("x")])])).toThrow(/client name "then" would shadow a JavaScript built-in/);
    expect(() => planProviders([plugin("com.example.x", [tool("x")], "constructor")])).toThrow(/"constructor"/);
  });

  it("refuses the same plugin twice", () => {
    expect(() => planProviders([plugin("com.example.notes", [tool("x")]), plugin("com.example.notes", [tool("y")])])).toThrow(
      /plugin com\.example\.notes is given twice/,
    );
  });
});

describe("kebabCase", () => {
  it("is one-to-one on camelCase names", () => {
    expect(["notes", "mailRelay", "aB", "ab", "aBC", "notes2"].map(kebabCase)).toEqual(["notes", "mail-relay", "a-b", "ab", "a-b-c", "notes2"]);
  });
});
