/**
 * One JSON Schema document as the evaluator sees it: its dialect, its subschema locations, `$anchor`s and
 * `$ref` targets, and what it holds that cannot be evaluated exactly (each a refusal at a JSON Pointer).
 */
import { didYouMean } from "../hints.js";
import { DEFAULT_INPUT_LIMITS, escapePointerSegment } from "../input.js";
import { compileLinearPattern, describePatternRefusal, patternWorkProblem } from "../pattern/linear-pattern.js";

/** The JSON Schema dialects a tool schema may declare. */
export type SchemaDialect = "2020-12" | "draft-07";

/** Something in a schema that is refused at load: where (a JSON Pointer into the schema), which keyword, why. */
export interface SchemaRefusal {
  readonly pointer: string;
  readonly keyword: string;
  readonly message: string;
}

const DRAFT_07_URIS = new Set(["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"]);
const DRAFT_2020_URIS = new Set(["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"]);

/** The dialect a schema's `$schema` names (2020-12 when absent); undefined for any other `$schema`. */
export function schemaDialect(schema: unknown): SchemaDialect | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return "2020-12";
  const declared = (schema as { $schema?: unknown }).$schema;
  if (declared === undefined) return "2020-12";
  if (typeof declared !== "string") return undefined;
  if (DRAFT_2020_URIS.has(declared)) return "2020-12";
  if (DRAFT_07_URIS.has(declared)) return "draft-07";
  return undefined;
}

/** Where subschemas sit, per dialect: applied to the same instance ("in place") or to parts of it. */
interface Vocabulary {
  readonly inPlace: ReadonlySet<string>;
  readonly inPlaceLists: ReadonlySet<string>;
  readonly inPlaceMaps: ReadonlySet<string>;
  readonly children: ReadonlySet<string>;
  readonly childLists: ReadonlySet<string>;
  readonly childMaps: ReadonlySet<string>;
}

const VOCABULARIES: Readonly<Record<SchemaDialect, Vocabulary>> = {
  // 2020-12 keeps draft-07's `dependencies` and `definitions` in its meta-schema (deprecated); toolpact honours them.
  "2020-12": {
    inPlace: new Set(["not", "if", "then", "else"]),
    inPlaceLists: new Set(["allOf", "anyOf", "oneOf"]),
    inPlaceMaps: new Set(["dependentSchemas", "dependencies"]),
    children: new Set(["additionalProperties", "propertyNames", "contains", "items", "unevaluatedProperties", "unevaluatedItems", "contentSchema"]),
    childLists: new Set(["prefixItems"]),
    childMaps: new Set(["properties", "patternProperties", "$defs", "definitions"]),
  },
  "draft-07": {
    inPlace: new Set(["not", "if", "then", "else"]),
    inPlaceLists: new Set(["allOf", "anyOf", "oneOf"]),
    inPlaceMaps: new Set(["dependencies"]),
    children: new Set(["additionalProperties", "propertyNames", "contains", "items", "additionalItems"]),
    childLists: new Set(["items"]),
    childMaps: new Set(["properties", "patternProperties", "definitions"]),
  },
};

/** One subschema of a schema object: its pointer, value, and whether it applies to the same instance. */
export interface Subschema {
  readonly pointer: string;
  readonly schema: unknown;
  readonly inPlace: boolean;
}

function isSchema(value: unknown): value is boolean | Record<string, unknown> {
  return typeof value === "boolean" || (typeof value === "object" && value !== null && !Array.isArray(value));
}

/** The subschemas directly inside a schema object. */
export function subschemasOf(schema: Record<string, unknown>, pointer: string, dialect: SchemaDialect): Subschema[] {
  const vocabulary = VOCABULARIES[dialect];
  const out: Subschema[] = [];
  for (const keyword of Object.keys(schema)) {
    const value = schema[keyword];
    const at = `${pointer}/${escapePointerSegment(keyword)}`;
    const inPlace = vocabulary.inPlace.has(keyword) || vocabulary.inPlaceLists.has(keyword) || vocabulary.inPlaceMaps.has(keyword);
    if ((vocabulary.inPlace.has(keyword) || vocabulary.children.has(keyword)) && isSchema(value)) {
      out.push({ pointer: at, schema: value, inPlace });
    } else if ((vocabulary.inPlaceLists.has(keyword) || vocabulary.childLists.has(keyword)) && Array.isArray(value)) {
      for (const [index, item] of value.entries()) if (isSchema(item)) out.push({ pointer: `${at}/${index}`, schema: item, inPlace });
    } else if ((vocabulary.inPlaceMaps.has(keyword) || vocabulary.childMaps.has(keyword)) && isSchema(value) && typeof value === "object") {
      for (const name of Object.keys(value)) {
        if (isSchema(value[name])) out.push({ pointer: `${at}/${escapePointerSegment(name)}`, schema: value[name], inPlace });
      }
    }
  }
  return out;
}

function unescapeSegment(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** A resolved reference: the target's pointer and value. */
export interface RefTarget {
  readonly pointer: string;
  readonly schema: boolean | Record<string, unknown>;
}

/** A schema document: the one resource a tool schema is (no `$id`, so no other resources and no dynamic scope). */
export class SchemaDocument {
  private readonly anchors = new Map<string, string>();
  private readonly refusals: SchemaRefusal[] = [];
  /** Every schema location reached from the root (through subschemas and references), by pointer. */
  private readonly locations = new Map<string, boolean | Record<string, unknown>>();

  constructor(
    readonly root: boolean | Record<string, unknown>,
    readonly dialect: SchemaDialect,
  ) {
    const duplicates: SchemaRefusal[] = [];
    this.collectAnchors(root, "", duplicates);
    this.visit("", root);
    // With an `$id` somewhere the document holds several resources; its refusal is the one that matters.
    if (!this.refusals.some((refusal) => refusal.keyword === "$id")) this.refusals.push(...duplicates);
    this.findRefCycles();
  }

  /** Everything in the document that cannot be evaluated exactly, in document order of discovery. */
  problems(): readonly SchemaRefusal[] {
    return this.refusals;
  }

  /** The schema at a pointer that was reached from the root. */
  at(pointer: string): boolean | Record<string, unknown> | undefined {
    return this.locations.get(pointer);
  }

  /** The reference keyword of a schema object: `$ref` (and, within one resource, `$dynamicRef`, which means the same). */
  refsOf(schema: Record<string, unknown>): string[] {
    const refs: string[] = [];
    if (typeof schema["$ref"] === "string") refs.push("$ref");
    if (this.dialect === "2020-12" && typeof schema["$dynamicRef"] === "string") refs.push("$dynamicRef");
    return refs;
  }

  /** Resolves a reference inside this document, or undefined (a refusal says why). */
  resolve(ref: string): RefTarget | undefined {
    if (!ref.startsWith("#")) return undefined;
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(1));
    } catch {
      return undefined;
    }
    if (fragment !== "" && !fragment.startsWith("/")) {
      const pointer = this.anchors.get(fragment);
      if (pointer === undefined) return undefined;
      return { pointer, schema: this.valueAt(pointer) as boolean | Record<string, unknown> };
    }
    const value = this.valueAt(fragment);
    if (!isSchema(value)) return undefined;
    return {
      pointer: fragment
        .split("/")
        .map((s) => escapePointerSegment(unescapeSegment(s)))
        .join("/"),
      schema: value,
    };
  }

  private valueAt(pointer: string): unknown {
    let current: unknown = this.root;
    if (pointer === "") return current;
    for (const raw of pointer.slice(1).split("/")) {
      const segment = unescapeSegment(raw);
      if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(segment)) current = current[Number(segment)];
      else if (typeof current === "object" && current !== null && !Array.isArray(current) && Object.hasOwn(current, segment)) {
        current = (current as Record<string, unknown>)[segment];
      } else return undefined;
    }
    return current;
  }

  private refuse(pointer: string, keyword: string, message: string): void {
    this.refusals.push({ pointer, keyword, message });
  }

  private collectAnchors(schema: unknown, pointer: string, duplicates: SchemaRefusal[]): void {
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return;
    const record = schema as Record<string, unknown>;
    for (const keyword of ["$anchor", "$dynamicAnchor"]) {
      const name = record[keyword];
      if (this.dialect !== "2020-12" || typeof name !== "string") continue;
      const earlier = this.anchors.get(name);
      if (earlier !== undefined && earlier !== pointer) {
        duplicates.push({
          pointer: `${pointer}/${keyword}`,
          keyword,
          message: `anchor ${JSON.stringify(name)} is already defined at ${earlier || "the root"}; anchor names are unique in a schema`,
        });
      } else {
        this.anchors.set(name, pointer);
      }
    }
    for (const sub of subschemasOf(record, pointer, this.dialect)) this.collectAnchors(sub.schema, sub.pointer, duplicates);
  }

  private visit(pointer: string, schema: boolean | Record<string, unknown>): void {
    if (this.locations.has(pointer)) return;
    this.locations.set(pointer, schema);
    if (typeof schema === "boolean") return;
    if (Object.hasOwn(schema, "$id")) {
      this.refuse(
        `${pointer}/$id`,
        "$id",
        `"$id" is not allowed in a tool schema: it is one self-contained document; remove "$id" and refer to parts with "$ref": "#/$defs/<name>"`,
      );
    }
    this.checkPatterns(schema, pointer);
    for (const keyword of this.refsOf(schema)) {
      const ref = schema[keyword] as string;
      const target = this.resolve(ref);
      if (target) this.visit(target.pointer, target.schema);
      else this.refuse(`${pointer}/${keyword}`, keyword, this.unresolved(keyword, ref));
    }
    for (const sub of subschemasOf(schema, pointer, this.dialect)) {
      this.visit(sub.pointer, sub.schema as boolean | Record<string, unknown>);
    }
  }

  /** Why a reference does not resolve, with the nearest name that would. */
  private unresolved(keyword: string, ref: string): string {
    const quoted = `"${keyword}" ${JSON.stringify(ref)}`;
    if (!ref.startsWith("#")) {
      return `${quoted} points outside this schema: a tool schema resolves "${keyword}" only inside itself (no files, no network); copy the definition into "$defs" and use "#/$defs/<name>"`;
    }
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(1));
    } catch {
      return `${quoted} is not a valid URI fragment`;
    }
    if (fragment !== "" && !fragment.startsWith("/")) return `${quoted} names no "$anchor" in this schema${didYouMean(fragment, this.anchors.keys())}`;
    if (this.valueAt(fragment) !== undefined) return `${quoted} points to a value that is not a schema`;
    const root = typeof this.root === "object" ? this.root : {};
    const defs = ["$defs", "definitions"].flatMap((section) => {
      const value = root[section];
      return typeof value === "object" && value !== null ? Object.keys(value).map((name) => `#/${section}/${escapePointerSegment(name)}`) : [];
    });
    return `${quoted} does not resolve inside this schema${didYouMean(ref, defs)}`;
  }

  /** Patterns must be ECMA-262, runnable in linear time, and cheap enough for the strings they may meet. */
  private checkPatterns(schema: Record<string, unknown>, pointer: string): void {
    const check = (source: string, at: string, keyword: string, maxLength: number | undefined): void => {
      const compiled = compileLinearPattern(source);
      const what = keyword === "pattern" ? "value" : "property name";
      const problem = compiled.ok
        ? patternWorkProblem(compiled.pattern, maxLength ?? DEFAULT_INPUT_LIMITS.maxBytes, what, maxLength !== undefined)
        : describePatternRefusal(source, compiled.refusal);
      if (problem) this.refuse(at, keyword, problem);
    };
    if (typeof schema["pattern"] === "string") {
      const maxLength = typeof schema["maxLength"] === "number" ? schema["maxLength"] : undefined;
      check(schema["pattern"], `${pointer}/pattern`, "pattern", maxLength);
    }
    const patterns = schema["patternProperties"];
    if (typeof patterns === "object" && patterns !== null && !Array.isArray(patterns)) {
      for (const source of Object.keys(patterns)) check(source, `${pointer}/patternProperties/${escapePointerSegment(source)}`, "patternProperties", undefined);
    }
  }

  /** Targets evaluated against the same instance: in-place subschemas and references, with the keyword that leads there. */
  private inPlaceEdges(pointer: string, schema: boolean | Record<string, unknown>): { target: string; via: string }[] {
    if (typeof schema === "boolean") return [];
    const edges: { target: string; via: string }[] = [];
    for (const keyword of this.refsOf(schema)) {
      const target = this.resolve(schema[keyword] as string);
      if (target) edges.push({ target: target.pointer, via: `${pointer}/${keyword}` });
    }
    // draft-07 ignores a `$ref`'s siblings.
    if (this.dialect === "draft-07" && typeof schema["$ref"] === "string") return edges;
    for (const sub of subschemasOf(schema, pointer, this.dialect)) if (sub.inPlace) edges.push({ target: sub.pointer, via: "" });
    return edges;
  }

  /** A cycle of references that consumes no data would recurse forever on every instance: refused at its `$ref`. */
  private findRefCycles(): void {
    const state = new Map<string, "active" | "done">();
    const reported = new Set<string>();
    const path: { pointer: string; via: string }[] = [];
    const walk = (pointer: string): void => {
      state.set(pointer, "active");
      for (const edge of this.inPlaceEdges(pointer, this.locations.get(pointer)!)) {
        const seen = state.get(edge.target);
        if (seen === "done") continue;
        if (seen === "active") {
          const start = path.findIndex((step) => step.pointer === edge.target);
          const refs = [...path.slice(start + 1).map((step) => step.via), edge.via].filter((via) => via !== "");
          const at = refs[refs.length - 1]!;
          if (reported.has(at)) continue;
          reported.add(at);
          const keyword = at.slice(at.lastIndexOf("/") + 1);
          this.refuse(
            at,
            keyword,
            `"${keyword}" leads back to ${edge.target === "" ? "the root" : edge.target} without consuming any data: evaluating it would never end; a recursive schema must descend into a property or an item before it refers to itself again`,
          );
          continue;
        }
        path.push({ pointer: edge.target, via: edge.via });
        walk(edge.target);
        path.pop();
      }
      state.set(pointer, "done");
    };
    for (const pointer of this.locations.keys()) {
      if (state.has(pointer)) continue;
      path.push({ pointer, via: "" });
      walk(pointer);
      path.pop();
    }
  }
}
