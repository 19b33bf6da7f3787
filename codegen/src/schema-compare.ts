import { canonicalJson } from "@toolpact/contract";

/** Which way a schema change breaks callers: an input must still accept every old value; an output must not surprise an old reader. */
export type SchemaRole = "input" | "output";

/** One incompatible difference between two versions of a schema, at a logical path (`$ref`s followed). */
export interface SchemaChange {
  readonly kind: "required-added" | "property-removed" | "retyped" | "enum-narrowed" | "constraint-tightened";
  /** JSON Pointer along the value's shape, e.g. "/properties/place/properties/lat". */
  readonly pointer: string;
  readonly message: string;
}

type Schema = Readonly<Record<string, unknown>>;

const LOWER_BOUNDS = ["minLength", "minItems", "minProperties", "minContains", "minimum", "exclusiveMinimum"];
const UPPER_BOUNDS = ["maxLength", "maxItems", "maxProperties", "maxContains", "maximum", "exclusiveMaximum"];
const EXACT_CONSTRAINTS = ["pattern", "format", "multipleOf"];
const UNIONS = ["oneOf", "anyOf"];
const ALL_TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"];

/**
 * The breaking differences from `before` to `after`, both whole schema documents. Inputs break on
 * a new required field, a removed or retyped property, a narrowed enum or a tightened constraint;
 * outputs break on a removed, retyped or no longer required property. Unions and intersections
 * compare branch by branch; a change toolpact cannot prove compatible is reported.
 */
export function compareSchemas(before: unknown, after: unknown, role: SchemaRole): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const comparison = { role, changes, oldRoot: asSchema(before), newRoot: asSchema(after), seen: new Set<string>() };
  compareAt(comparison, comparison.oldRoot, comparison.newRoot, "", "#", "#");
  return changes;
}

interface Comparison {
  readonly role: SchemaRole;
  readonly changes: SchemaChange[];
  readonly oldRoot: Schema;
  readonly newRoot: Schema;
  /** Pairs of (old, new) schema locations already compared: recursive schemas end. */
  readonly seen: Set<string>;
}

function compareAt(c: Comparison, before: Schema, after: Schema, path: string, oldAt: string, newAt: string): void {
  const [oldSchema, oldLocation] = deref(c.oldRoot, before, oldAt);
  const [newSchema, newLocation] = deref(c.newRoot, after, newAt);
  const pair = `${oldLocation}\u0000${newLocation}`;
  if (c.seen.has(pair)) return;
  c.seen.add(pair);
  const text = canonicalJson(oldSchema);
  // Equal text is equal meaning unless it refers elsewhere: then the targets may differ, so compare on.
  if (text === canonicalJson(newSchema) && !text.includes('"$ref"')) return;

  const report = (kind: SchemaChange["kind"], pointer: string, message: string) => c.changes.push({ kind, pointer, message });

  compareTypes(c, oldSchema, newSchema, path, report);
  compareEnums(c, oldSchema, newSchema, path, report);
  if (c.role === "input") compareConstraints(oldSchema, newSchema, path, report);
  compareUnions(c, oldSchema, newSchema, path, report);
  compareProperties(c, oldSchema, newSchema, path, oldLocation, newLocation, report);

  for (const keyword of ["items", "additionalProperties"] as const) {
    const oldSub = oldSchema[keyword];
    const newSub = newSchema[keyword];
    if (isSchema(oldSub) || isSchema(newSub)) {
      const oldChild = isSchema(oldSub) ? oldSub : {};
      const newChild = isSchema(newSub) ? newSub : {};
      if (keyword === "additionalProperties" && (oldSub === false || newSub === false)) continue;
      compareAt(c, oldChild, newChild, `${path}/${keyword}`, `${oldLocation}/${keyword}`, `${newLocation}/${keyword}`);
    }
  }
}

type Report = (kind: SchemaChange["kind"], pointer: string, message: string) => void;

function compareTypes(c: Comparison, before: Schema, after: Schema, path: string, report: Report): void {
  const oldTypes = typesOf(before);
  const newTypes = typesOf(after);
  const [wider, narrower] = c.role === "input" ? [newTypes, oldTypes] : [oldTypes, newTypes];
  const lost = [...narrower].filter((type) => !wider.has(type) && !(type === "integer" && wider.has("number")));
  if (lost.length > 0) report("retyped", path, `type ${describeTypes(oldTypes)} became ${describeTypes(newTypes)}`);
}

function compareEnums(c: Comparison, before: Schema, after: Schema, path: string, report: Report): void {
  const oldValues = enumOf(before);
  const newValues = enumOf(after);
  if (c.role === "input") {
    if (newValues === undefined) return;
    if (oldValues === undefined) {
      report("enum-narrowed", path, `now accepts only ${describeValues(newValues)}`);
      return;
    }
    const dropped = [...oldValues].filter((value) => !newValues.has(value));
    if (dropped.length > 0) report("enum-narrowed", path, `no longer accepts ${describeValues(dropped)}`);
  } else {
    if (oldValues === undefined) return;
    if (newValues === undefined) {
      report("retyped", path, `was limited to ${describeValues(oldValues)}, now is not`);
      return;
    }
    const added = [...newValues].filter((value) => !oldValues.has(value));
    if (added.length > 0) report("retyped", path, `may now be ${describeValues(added)}`);
  }
}

function compareConstraints(before: Schema, after: Schema, path: string, report: Report): void {
  for (const keyword of LOWER_BOUNDS) tightened(keyword, before[keyword], after[keyword], (o, n) => n > o);
  for (const keyword of UPPER_BOUNDS) tightened(keyword, before[keyword], after[keyword], (o, n) => n < o);
  for (const keyword of EXACT_CONSTRAINTS) {
    const oldValue = before[keyword];
    const newValue = after[keyword];
    if (newValue === undefined || canonicalJson(oldValue ?? null) === canonicalJson(newValue)) continue;
    report(
      "constraint-tightened",
      path,
      oldValue === undefined ? `${keyword} ${JSON.stringify(newValue)} was added` : `${keyword} ${JSON.stringify(oldValue)} became ${JSON.stringify(newValue)}`,
    );
  }
  if (after.uniqueItems === true && before.uniqueItems !== true) report("constraint-tightened", path, "uniqueItems was added");
  if (after.additionalProperties === false && before.additionalProperties !== false) {
    report("constraint-tightened", path, "no longer accepts properties it does not name (additionalProperties: false)");
  }

  function tightened(keyword: string, oldValue: unknown, newValue: unknown, isTighter: (o: number, n: number) => boolean): void {
    if (typeof newValue !== "number") return;
    if (typeof oldValue !== "number") report("constraint-tightened", path, `${keyword} ${newValue} was added`);
    else if (isTighter(oldValue, newValue)) report("constraint-tightened", path, `${keyword} ${oldValue} became ${newValue}`);
  }
}

/**
 * Unions may gain branches on input and lose them on output; intersections the other way round.
 * A side without the keyword counts as one branch: itself.
 */
function compareUnions(c: Comparison, before: Schema, after: Schema, path: string, report: Report): void {
  for (const keyword of [...UNIONS, "allOf"]) {
    const oldBranches = branchesOf(c.oldRoot, before, keyword);
    const newBranches = branchesOf(c.newRoot, after, keyword);
    if (oldBranches === undefined && newBranches === undefined) continue;
    const widening = UNIONS.includes(keyword) === (c.role === "input");
    const [must, within] = widening
      ? [oldBranches ?? [canonicalJson(before)], newBranches ?? [canonicalJson(after)]]
      : [newBranches ?? [canonicalJson(after)], oldBranches ?? [canonicalJson(before)]];
    if (must.some((branch) => !within.includes(branch))) {
      report(
        "retyped",
        path,
        `its ${keyword} changed in a way toolpact cannot prove compatible (a branch was ${widening ? "removed or changed" : "added or changed"})`,
      );
    }
  }
}

function compareProperties(c: Comparison, before: Schema, after: Schema, path: string, oldAt: string, newAt: string, report: Report): void {
  const oldProperties = propertiesOf(before);
  const newProperties = propertiesOf(after);
  const oldRequired = requiredOf(before);
  const newRequired = requiredOf(after);
  for (const name of Object.keys(oldProperties).sort()) {
    const at = `${path}/properties/${escapePointer(name)}`;
    if (!(name in newProperties)) {
      report("property-removed", at, `"${name}" was removed`);
      continue;
    }
    if (c.role === "output" && oldRequired.has(name) && !newRequired.has(name)) report("retyped", at, `"${name}" is no longer always present`);
    compareAt(c, oldProperties[name]!, newProperties[name]!, at, `${oldAt}/properties/${escapePointer(name)}`, `${newAt}/properties/${escapePointer(name)}`);
  }
  if (c.role === "input") {
    for (const name of [...newRequired].sort()) {
      if (!oldRequired.has(name)) report("required-added", `${path}/properties/${escapePointer(name)}`, `new required field "${name}"`);
    }
  }
}

/** Follows `$ref`s inside the document; returns the schema and its location as a URI fragment ("#" is the root). */
function deref(root: Schema, schema: Schema, location: string): [Schema, string] {
  let current = schema;
  let at = location;
  for (let hops = 0; typeof current.$ref === "string" && hops < 32; hops++) {
    const target = resolvePointer(root, current.$ref);
    if (target === undefined) break;
    at = current.$ref;
    current = target;
  }
  return [current, at];
}

function resolvePointer(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith("#")) return undefined;
  if (ref === "#") return root;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const segment = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[segment] : undefined;
  }
  if (isSchema(node)) return node;
  // An `$anchor` reference: find the schema that declares it.
  return ref.includes("/") ? undefined : findAnchor(root, ref.slice(1));
}

function findAnchor(node: unknown, anchor: string): Schema | undefined {
  if (typeof node !== "object" || node === null) return undefined;
  if (!Array.isArray(node) && (node as Schema).$anchor === anchor) return node as Schema;
  for (const value of Object.values(node)) {
    const found = findAnchor(value, anchor);
    if (found) return found;
  }
  return undefined;
}

function typesOf(schema: Schema): Set<string> {
  const type = schema.type;
  if (typeof type === "string") return new Set([type]);
  if (Array.isArray(type)) return new Set(type.filter((t): t is string => typeof t === "string"));
  return new Set(ALL_TYPES);
}

function describeTypes(types: ReadonlySet<string>): string {
  return types.size === ALL_TYPES.length ? "any" : [...types].sort().join(" | ");
}

function enumOf(schema: Schema): Set<string> | undefined {
  if ("const" in schema) return new Set([canonicalJson(schema.const)]);
  return Array.isArray(schema.enum) ? new Set(schema.enum.map((value) => canonicalJson(value))) : undefined;
}

function describeValues(values: Iterable<string>): string {
  return [...values].sort().join(", ");
}

function branchesOf(root: Schema, schema: Schema, keyword: string): string[] | undefined {
  const value = schema[keyword];
  if (!Array.isArray(value)) return undefined;
  return value.map((branch) => (isSchema(branch) ? canonicalJson(deref(root, branch, "")[0]) : canonicalJson(branch)));
}

function propertiesOf(schema: Schema): Record<string, Schema> {
  const properties = schema.properties;
  if (!isSchema(properties)) return {};
  return Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, isSchema(value) ? value : {}]));
}

function requiredOf(schema: Schema): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === "string") : []);
}

function asSchema(value: unknown): Schema {
  return isSchema(value) ? value : {};
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}
