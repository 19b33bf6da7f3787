import type { ManifestInput } from "@toolpact/contract";
import { describe, expect, it } from "vitest";
import { diffManifests } from "./diff.js";
import { manifestOf } from "./fixtures.test-support.js";

type Tool = NonNullable<ManifestInput["tools"]>[number];

const baseInput = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1, maxLength: 200 },
    priority: { enum: ["low", "normal", "high"] },
    count: { type: "number", minimum: 0 },
    place: { $ref: "#/$defs/place" },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["title"],
  $defs: { place: { type: "object", properties: { lat: { type: "number" }, lng: { type: "number" } }, required: ["lat"] } },
};
const baseOutput = {
  type: "object",
  properties: { id: { type: "string" }, state: { enum: ["open", "done"] }, note: { type: "string" } },
  required: ["id", "state"],
};
const createRecord: Tool = { name: "create-record", effect: "write", inputSchema: baseInput, outputSchema: baseOutput };

const plugin = (tools: Tool[], version = "1.0.0") => manifestOf({ id: "com.example.notes", version, permissions: ["tools:provide"], tools });
/** The same plugin with create-record changed by `edit` (a deep copy, so edits do not leak). */
const changed = (edit: (tool: { inputSchema: any; outputSchema: any } & Record<string, any>) => void, version = "1.0.0") => {
  const tool = structuredClone(createRecord) as any;
  edit(tool);
  return plugin([tool], version);
};
const changesOf = (after: ReturnType<typeof plugin>) =>
  diffManifests(plugin([createRecord]), after).tools.flatMap((tool) => tool.changes.map((c) => `${c.kind} ${c.message}`));

describe("diffManifests", () => {
  it("finds nothing between equal manifests and ignores compatible changes", () => {
    expect(diffManifests(plugin([createRecord]), plugin([createRecord]))).toEqual({
      providerId: "com.example.notes",
      tools: [],
      added: [],
      lacksVersionBump: false,
    });
    const compatible = changed((tool) => {
      tool.inputSchema.properties.body = { type: "string" }; // new optional input field
      tool.inputSchema.properties.title.maxLength = 500; // loosened constraint
      tool.inputSchema.properties.priority.enum.push("urgent"); // widened input enum
      tool.inputSchema.properties.count.type = ["number", "null"]; // widened input type
      tool.inputSchema.required = []; // a required field became optional
      tool.outputSchema.properties.extra = { type: "number" }; // new output field
      tool.outputSchema.properties.state.enum = ["open"]; // narrowed output enum
      tool.effect = "read"; // loosened effect
      tool.requiresConfirmation = true; // unchanged: write tools require it by default
    });
    expect(changesOf(compatible)).toEqual([]);
  });

  it.each([
    [
      "a new required input field",
      (t: any) => ((t.inputSchema.properties.body = { type: "string" }), t.inputSchema.required.push("body")),
      'input-required-added input /properties/body: new required field "body"',
    ],
    ["a removed input property", (t: any) => delete t.inputSchema.properties.tags, 'input-property-removed input /properties/tags: "tags" was removed'],
    [
      "a retyped input property",
      (t: any) => (t.inputSchema.properties.count.type = "integer"),
      "input-property-retyped input /properties/count: type number became integer",
    ],
    [
      "a narrowed input enum",
      (t: any) => (t.inputSchema.properties.priority.enum = ["low", "high"]),
      'input-enum-narrowed input /properties/priority: no longer accepts "normal"',
    ],
    [
      "a tightened minLength",
      (t: any) => (t.inputSchema.properties.title.minLength = 3),
      "input-constraint-tightened input /properties/title: minLength 1 became 3",
    ],
    [
      "a tightened maximum",
      (t: any) => (t.inputSchema.properties.count.maximum = 10),
      "input-constraint-tightened input /properties/count: maximum 10 was added",
    ],
    [
      "an added pattern",
      (t: any) => (t.inputSchema.properties.title.pattern = "^[A-Z]"),
      'input-constraint-tightened input /properties/title: pattern "^[A-Z]" was added',
    ],
    [
      "a closed input object",
      (t: any) => (t.inputSchema.additionalProperties = false),
      "input-constraint-tightened input /: no longer accepts properties it does not name (additionalProperties: false)",
    ],
    [
      "a change behind a $ref",
      (t: any) => t.inputSchema.$defs.place.required.push("lng"),
      'input-required-added input /properties/place/properties/lng: new required field "lng"',
    ],
    [
      "a retyped array item",
      (t: any) => (t.inputSchema.properties.tags.items = { type: "number" }),
      "input-property-retyped input /properties/tags/items: type string became number",
    ],
    ["a removed output property", (t: any) => delete t.outputSchema.properties.note, 'output-property-removed output /properties/note: "note" was removed'],
    [
      "a retyped output property",
      (t: any) => (t.outputSchema.properties.id.type = ["string", "null"]),
      "output-property-retyped output /properties/id: type string became null | string",
    ],
    [
      "an output field no longer always present",
      (t: any) => (t.outputSchema.required = ["id"]),
      'output-property-retyped output /properties/state: "state" is no longer always present',
    ],
    [
      "a widened output enum",
      (t: any) => t.outputSchema.properties.state.enum.push("failed"),
      'output-property-retyped output /properties/state: may now be "failed"',
    ],
    ["a removed outputSchema", (t: any) => delete t.outputSchema, "output-property-retyped output /: outputSchema was removed: results are no longer typed"],
    ["a tightened effect", (t: any) => (t.effect = "external"), "effect-tightened effect write became external"],
    ["a higher verification level", (t: any) => (t.minVerificationLevel = 2), "verification-tightened minVerificationLevel 0 became 2"],
  ])("reports %s, without a version bump", (_name, edit, expected) => {
    const after = changed(edit as (tool: any) => void);
    expect(changesOf(after)).toEqual([expected]);
    const diff = diffManifests(plugin([createRecord]), after);
    expect(diff.tools).toEqual([expect.objectContaining({ tool: "com.example.notes:create-record@1", lacksVersionBump: true })]);
    expect(diff.lacksVersionBump).toBe(true);
  });

  it("reports confirmation tightened", () => {
    const read: Tool = { name: "search", effect: "read", inputSchema: { type: "object" } };
    const diff = diffManifests(plugin([read]), plugin([{ ...read, requiresConfirmation: true }]));
    expect(diff.tools).toEqual([
      {
        tool: "com.example.notes:search@1",
        changes: [{ kind: "confirmation-tightened", pointer: "", message: "now requires confirmation" }],
        lacksVersionBump: true,
      },
    ]);
  });

  it("treats unions by branch: gaining an input branch is fine, losing one is not", () => {
    const union: Tool = {
      name: "send",
      effect: "read",
      inputSchema: { type: "object", properties: { to: { oneOf: [{ type: "string" }, { type: "number" }] } } },
    };
    const withBranches = (branches: object[]) => plugin([{ ...union, inputSchema: { type: "object", properties: { to: { oneOf: branches } } } }]);
    expect(diffManifests(plugin([union]), withBranches([{ type: "string" }, { type: "number" }, { type: "null" }])).tools).toEqual([]);
    expect(diffManifests(plugin([union]), withBranches([{ type: "string" }])).tools[0]!.changes.map((c) => c.kind)).toEqual(["input-property-retyped"]);
  });

  it("ends on recursive schemas", () => {
    const tree = { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } } };
    const tool: Tool = { name: "tree", effect: "read", inputSchema: tree };
    const deeper = structuredClone(tree) as any;
    deeper.required = ["name"];
    expect(diffManifests(plugin([tool]), plugin([tool])).tools).toEqual([]);
    expect(diffManifests(plugin([tool]), plugin([{ ...tool, inputSchema: deeper }])).tools[0]!.changes.map((c) => c.message)).toEqual([
      'input /properties/name: new required field "name"',
    ]);
  });

  it("a new version with breaking changes beside the old one needs no bump; changing the old one in place does", () => {
    const v2: Tool = { ...createRecord, version: 2, inputSchema: { ...baseInput, required: ["title", "priority"] } };
    const diff = diffManifests(plugin([createRecord]), plugin([createRecord, v2]));
    expect(diff).toEqual({ providerId: "com.example.notes", tools: [], added: ["com.example.notes:create-record@2"], lacksVersionBump: false });
  });

  it("a removed tool version breaks its callers: it needs a major version bump of the plugin", () => {
    const v2: Tool = { ...createRecord, version: 2 };
    const removed = diffManifests(plugin([createRecord]), plugin([v2], "1.1.0"));
    expect(removed.tools).toEqual([
      {
        tool: "com.example.notes:create-record@1",
        changes: [{ kind: "tool-removed", pointer: "", message: "removed without a major version bump of the plugin (1.0.0 -> 1.1.0)" }],
        lacksVersionBump: true,
      },
    ]);
    expect(diffManifests(plugin([createRecord]), plugin([v2], "2.0.0"))).toMatchObject({
      lacksVersionBump: false,
      tools: [{ changes: [{ message: "removed" }] }],
    });
    expect(diffManifests(plugin([createRecord], "0.3.0"), plugin([v2], "0.4.0")).lacksVersionBump).toBe(false);
    expect(diffManifests(plugin([createRecord], "0.3.0"), plugin([v2], "0.3.1")).lacksVersionBump).toBe(true);
  });
});
