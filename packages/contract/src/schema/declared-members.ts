/**
 * The check of an object's declared properties, generated as JavaScript once per schema object (as ajv
 * does), because a loop over the members would read every object through one shared property access that
 * sees every name and shape of every schema, while generated code gives each member its own access site.
 *
 * Nothing from the schema becomes code: the source is made of fixed text and member numbers only; names,
 * segments, messages and subschema checks reach the function as data (the `members` array it is made with).
 * Where the host forbids code generation (`--disallow-code-generation-from-strings`, a CSP), or for very
 * many members, the same check runs as a loop.
 */
import { fail, isObject, within, type Check, type Json, type PendingIssue, type Run } from "./check.js";
import type { Evaluated } from "./evaluated.js";

/** A declared property, with what its issues need made once. */
export interface Member {
  readonly name: string;
  /** `/name`, escaped: put in front of the paths of the member's issues. */
  readonly segment: string;
  readonly check: Check;
  readonly required: boolean;
  /** The issue when it is required and absent. */
  readonly missing: string;
}

/** What the declared members' check is made of. */
export interface DeclaredMembers {
  readonly members: readonly Member[];
  /** additionalProperties over the other members; undefined when the schema has none. */
  readonly others: Check | undefined;
  /** The type test's issue when the schema's `type` is "object"; undefined: other types pass. */
  readonly typeMessage: string | undefined;
}

/** More members than this are checked by the loop: the generated function would only grow. */
const MOST_GENERATED = 128;

/** The helpers generated code calls, passed in with the members. */
interface Helpers {
  readonly hasOwn: (object: object, key: PropertyKey) => boolean;
  readonly isObject: (data: unknown) => data is Json;
  readonly fail: (run: Run, message: string) => false;
  readonly countEnumerable: (object: Json) => number;
  readonly within: (issues: PendingIssue[], from: number, segment: string) => void;
}

/**
 * Own and inherited enumerable keys, counted without allocating: when that equals the declared members
 * found, the object has no other own member.
 */
function countEnumerable(object: Json): number {
  let count = 0;
  // Inherited keys only make the count larger; they never hide an own one.
  for (const _ in object) count++;
  return count;
}

const HELPERS: Helpers = { hasOwn: Object.hasOwn, isObject, fail, countEnumerable, within };

/** The source of the generated check for `count` members: fixed text and numbers, nothing else. */
export function declaredMembersSource(spec: { count: number; required: readonly boolean[]; others: boolean }): string {
  const { count, required, others } = spec;
  if (!Number.isSafeInteger(count) || count < 0 || required.length !== count) throw new Error("declared members: bad count");
  const lines = [
    '"use strict";',
    "const { hasOwn, isObject, fail, countEnumerable, within } = helpers;",
    "const typeMessage = spec.typeMessage;",
    "const others = spec.others;",
  ];
  for (let index = 0; index < count; index++) {
    lines.push(
      `const name${index} = spec.members[${index}].name, check${index} = spec.members[${index}].check, segment${index} = spec.members[${index}].segment, missing${index} = spec.members[${index}].missing;`,
    );
  }
  lines.push(
    "return function declaredMembers(data, run, seen) {",
    "  if (!isObject(data)) return typeMessage === undefined || fail(run, typeMessage);",
    "  const issues = run.issues;",
    "  let valid = true, found = 0, from = 0;",
  );
  for (let index = 0; index < count; index++) {
    lines.push(
      `  if (hasOwn(data, name${index})) {`,
      "    found++;",
      `    if (seen !== undefined) seen.property(name${index});`,
      `    if (issues === null) { if (!check${index}(data[name${index}], run, undefined)) return false; }`,
      `    else { from = issues.length; if (!check${index}(data[name${index}], run, undefined)) { within(issues, from, segment${index}); valid = false; } }`,
      required[index]
        ? `  } else { if (issues === null) return false; issues.push({ path: segment${index}, message: missing${index} }); valid = false; }`
        : "  }",
    );
  }
  if (others) {
    lines.push(
      "  if (seen !== undefined) seen.allProperties = true;",
      "  if (countEnumerable(data) === found) return valid;",
      "  return others(data, run, undefined) && valid;",
    );
  } else {
    lines.push("  return valid;");
  }
  lines.push("};");
  return lines.join("\n");
}

type Factory = (spec: DeclaredMembers, helpers: Helpers) => Check;

/** Whether this host lets code be generated from strings; found out on first use. */
let generationAllowed: boolean | undefined;

/**
 * Numbers the generated functions. Each source ends in its own number, so that no two schema objects share
 * compiled code, and with it the property accesses' feedback (V8 reuses both for equal source text).
 */
let generated = 0;

/**
 * The check of the declared members (see the module's comment). Each schema object gets a function of its
 * own, so that each of its property accesses sees one name.
 */
export function declaredMembersCheck(spec: DeclaredMembers): Check {
  if (spec.members.length > MOST_GENERATED || generationAllowed === false) return declaredMembersLoop(spec);
  const shape = { count: spec.members.length, required: spec.members.map((member) => member.required), others: spec.others !== undefined };
  const source = `${declaredMembersSource(shape)}\n// declared members ${++generated}`;
  let factory: Factory;
  try {
    factory = new Function("spec", "helpers", source) as Factory;
    generationAllowed = true;
  } catch (error) {
    if (!(error instanceof EvalError)) throw error;
    generationAllowed = false;
    return declaredMembersLoop(spec);
  }
  return factory(spec, HELPERS);
}

/** The same check as a loop over the members. */
export function declaredMembersLoop({ members, others, typeMessage }: DeclaredMembers): Check {
  return (data: unknown, run: Run, seen: Evaluated | undefined) => {
    if (!isObject(data)) return typeMessage === undefined || fail(run, typeMessage);
    const issues = run.issues;
    let valid = true;
    let found = 0;
    for (const member of members) {
      if (!Object.hasOwn(data, member.name)) {
        if (!member.required) continue;
        if (issues === null) return false;
        issues.push({ path: member.segment, message: member.missing });
        valid = false;
        continue;
      }
      found++;
      if (seen !== undefined) seen.property(member.name);
      if (issues === null) {
        if (!member.check(data[member.name], run, undefined)) return false;
        continue;
      }
      const from = issues.length;
      if (member.check(data[member.name], run, undefined)) continue;
      within(issues, from, member.segment);
      valid = false;
    }
    if (others === undefined) return valid;
    // Every member is declared or evaluated by additionalProperties.
    if (seen !== undefined) seen.allProperties = true;
    if (countEnumerable(data) === found) return valid;
    return others(data, run, undefined) && valid;
  };
}
