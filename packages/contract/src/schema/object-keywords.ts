/** The keywords that apply to objects. */
import type { LinearPattern } from "../pattern/linear-pattern.js";
import { declaredMembersCheck, type Member } from "./declared-members.js";
import { all, checkChild, fail, failAt, isObject, linear, number, segmentOf, within, type Check, type Json, type Subschemas } from "./check.js";

/**
 * Keywords of objects (members, `required`, counts, dependencies, `propertyNames`) behind one test of the
 * type: other types pass, or fail with `typeMessage` when the schema's `type` is "object".
 */
export function objectKeywords(pointer: string, schema: Json, schemas: Subschemas, typeMessage: string | undefined): Check | undefined {
  const required = Array.isArray(schema["required"]) ? (schema["required"] as string[]) : [];
  const memberCheck = members(pointer, schema, schemas, required);
  const checks = otherObjectKeywords(
    pointer,
    schema,
    schemas,
    required.filter((name) => !memberCheck?.requires.has(name)),
  );
  // The common case, members alone, tests the type itself: one closure per object.
  if (memberCheck && checks.length === 0) return memberCheck.typed(typeMessage);
  if (memberCheck) checks.unshift(memberCheck.typed(undefined));
  if (checks.length === 0) return undefined;
  const body = all(checks);
  const other = typeMessage === undefined;
  return (data, run, seen) => (isObject(data) ? body(data, run, seen) : other || fail(run, typeMessage));
}

function otherObjectKeywords(pointer: string, schema: Json, schemas: Subschemas, rest: readonly string[]): Check[] {
  const checks: Check[] = [];
  if (rest.length > 0) {
    checks.push((data, run) => {
      let valid = true;
      for (const name of rest) {
        if (Object.hasOwn(data as Json, name)) continue;
        if (run.issues === null) return false;
        valid = failAt(run, name, `must have required property '${name}'`);
      }
      return valid;
    });
  }
  const minProperties = number(schema, "minProperties");
  if (minProperties !== undefined) {
    const message = `must NOT have fewer than ${minProperties} properties`;
    checks.push((data, run) => Object.keys(data as Json).length >= minProperties || fail(run, message));
  }
  const maxProperties = number(schema, "maxProperties");
  if (maxProperties !== undefined) {
    const message = `must NOT have more than ${maxProperties} properties`;
    checks.push((data, run) => Object.keys(data as Json).length <= maxProperties || fail(run, message));
  }
  checks.push(...dependencies(pointer, schema, schemas));
  if (Object.hasOwn(schema, "propertyNames")) {
    const names = schemas.sub(pointer, "propertyNames", schema["propertyNames"]);
    checks.push((data, run) => {
      let valid = true;
      for (const name of Object.keys(data as Json)) {
        if (names(name, run.memo.validity, undefined)) continue;
        if (run.issues === null) return false;
        valid = failAt(run, name, `property name '${name}' is invalid`);
      }
      return valid;
    });
  }
  return checks;
}

/**
 * `properties`, `patternProperties` and `additionalProperties`. Without `patternProperties` the declared
 * names are visited first, checking the required ones in the same pass (`requires`), and the instance's
 * other members only when it has some. Issues follow the keywords' order: properties, then the others.
 */
function members(
  pointer: string,
  schema: Json,
  schemas: Subschemas,
  required: readonly string[],
): { typed: (typeMessage: string | undefined) => Check; requires: ReadonlySet<string> } | undefined {
  const properties = isObject(schema["properties"]) ? schema["properties"] : undefined;
  const patterns = isObject(schema["patternProperties"]) ? schema["patternProperties"] : undefined;
  const hasAdditional = Object.hasOwn(schema, "additionalProperties");
  if (!properties && !patterns && !hasAdditional) return undefined;
  const named = new Map<string, Check>();
  for (const name of Object.keys(properties ?? {})) named.set(name, schemas.sub(`${pointer}/properties`, name, properties![name]));
  const additional = hasAdditional ? schemas.sub(pointer, "additionalProperties", schema["additionalProperties"]) : undefined;
  const forbidden = schema["additionalProperties"] === false;
  if (patterns && Object.keys(patterns).length > 0) {
    const patterned = Object.keys(patterns).map((source) => ({
      pattern: linear(source),
      check: schemas.sub(`${pointer}/patternProperties`, source, patterns[source]),
    }));
    const check = everyMember(named, patterned, additional, forbidden);
    return { typed: (typeMessage) => typeGuarded(check, typeMessage), requires: new Set() };
  }
  const requires = new Set(required.filter((name) => named.has(name)));
  const declared: Member[] = [...named].map(([name, check]) => ({
    name,
    segment: segmentOf(name),
    check,
    required: requires.has(name),
    missing: `must have required property '${name}'`,
  }));
  const others = additional === undefined ? undefined : otherMembers(named, additional, forbidden);
  const typed = (typeMessage: string | undefined): Check => declaredMembersCheck({ members: declared, others, typeMessage });
  return { typed, requires };
}

/** `check` behind a test of the object type (see objectKeywords). */
function typeGuarded(check: Check, typeMessage: string | undefined): Check {
  return (data, run, seen) => (isObject(data) ? check(data, run, seen) : typeMessage === undefined || fail(run, typeMessage));
}

/** additionalProperties over the members `named` does not declare. */
function otherMembers(named: ReadonlyMap<string, Check>, additional: Check, forbidden: boolean): Check {
  return (data, run) => {
    const object = data as Json;
    let valid = true;
    for (const name of Object.keys(object)) {
      if (named.has(name)) continue;
      if (forbidden ? failAt(run, name, `must NOT have additional properties: '${name}'`) : checkChild(additional, object[name], name, run)) continue;
      if (run.issues === null) return false;
      valid = false;
    }
    return valid;
  };
}

/** With `patternProperties`: one pass over the instance's members, each checked by every schema that applies. */
function everyMember(
  named: ReadonlyMap<string, Check>,
  patterned: readonly { pattern: LinearPattern; check: Check }[],
  additional: Check | undefined,
  forbidden: boolean,
): Check {
  return (data, run, seen) => {
    const object = data as Json;
    let valid = true;
    for (const name of Object.keys(object)) {
      const value = object[name];
      const from = run.issues?.length ?? 0;
      const check = named.get(name);
      let matched = check !== undefined;
      let memberValid = true;
      if (check !== undefined && !check(value, run, undefined)) {
        if (run.issues === null) return false;
        memberValid = false;
      }
      for (const entry of patterned) {
        if (!entry.pattern.test(name)) continue;
        matched = true;
        if (entry.check(value, run, undefined)) continue;
        if (run.issues === null) return false;
        memberValid = false;
      }
      if (!matched && additional !== undefined) {
        matched = true;
        const ok = forbidden ? fail(run, `must NOT have additional properties: '${name}'`) : additional(value, run, undefined);
        if (!ok) {
          if (run.issues === null) return false;
          memberValid = false;
        }
      }
      if (!memberValid) {
        within(run.issues!, from, segmentOf(name));
        valid = false;
      }
      if (matched && seen !== undefined) seen.property(name);
    }
    return valid;
  };
}

function dependencies(pointer: string, schema: Json, schemas: Subschemas): Check[] {
  const checks: Check[] = [];
  const requiring = (source: Json): void => {
    for (const [name, needed] of Object.entries(source)) {
      if (!Array.isArray(needed)) continue;
      checks.push((data, run) => {
        if (!Object.hasOwn(data as Json, name)) return true;
        let valid = true;
        for (const other of needed as string[]) {
          if (Object.hasOwn(data as Json, other)) continue;
          if (run.issues === null) return false;
          valid = failAt(run, other, `must have property '${other}' when property '${name}' is present`);
        }
        return valid;
      });
    }
  };
  const applying = (keyword: string, source: Json): void => {
    for (const [name, sub] of Object.entries(source)) {
      if (Array.isArray(sub)) continue;
      const check = schemas.sub(`${pointer}/${keyword}`, name, sub);
      checks.push((data, run, seen) => !Object.hasOwn(data as Json, name) || check(data, run, seen));
    }
  };
  if (schemas.dialect === "2020-12") {
    if (isObject(schema["dependentRequired"])) requiring(schema["dependentRequired"]);
    if (isObject(schema["dependentSchemas"])) applying("dependentSchemas", schema["dependentSchemas"]);
  }
  // draft-07's `dependencies`, which 2020-12 split in two but still defines (deprecated).
  if (isObject(schema["dependencies"])) {
    requiring(schema["dependencies"]);
    applying("dependencies", schema["dependencies"]);
  }
  return checks;
}
