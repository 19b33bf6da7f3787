/** The keywords that apply to objects. */
import { escapePointerSegment } from "../input.js";
import type { LinearPattern } from "../pattern/linear-pattern.js";
import { at, fail, isObject, linear, number, VALIDITY_ONLY, type Check, type Json, type Subschemas } from "./check.js";

/** Keywords of objects: members, `required`, counts, dependencies, `propertyNames`. */
export function objectKeywords(pointer: string, schema: Json, schemas: Subschemas): Check[] {
  const checks: Check[] = [];
  const required = Array.isArray(schema["required"]) ? (schema["required"] as string[]) : [];
  const memberCheck = members(pointer, schema, schemas, required);
  if (memberCheck) checks.push(memberCheck.check);
  const rest = required.filter((name) => !memberCheck?.requires.has(name));
  if (rest.length > 0) {
    checks.push((data, path, run) => {
      let valid = true;
      for (const name of rest) {
        if (Object.hasOwn(data as Json, name)) continue;
        if (run.issues === null) return false;
        valid = fail(run, at(run, path, name), `must have required property '${name}'`);
      }
      return valid;
    });
  }
  const minProperties = number(schema, "minProperties");
  if (minProperties !== undefined) {
    const message = `must NOT have fewer than ${minProperties} properties`;
    checks.push((data, path, run) => Object.keys(data as Json).length >= minProperties || fail(run, path, message));
  }
  const maxProperties = number(schema, "maxProperties");
  if (maxProperties !== undefined) {
    const message = `must NOT have more than ${maxProperties} properties`;
    checks.push((data, path, run) => Object.keys(data as Json).length <= maxProperties || fail(run, path, message));
  }
  checks.push(...dependencies(pointer, schema, schemas));
  if (Object.hasOwn(schema, "propertyNames")) {
    const names = schemas.sub(pointer, "propertyNames", schema["propertyNames"]);
    checks.push((data, path, run) => {
      let valid = true;
      for (const name of Object.keys(data as Json)) {
        if (names(name, path, VALIDITY_ONLY, undefined)) continue;
        if (run.issues === null) return false;
        valid = fail(run, at(run, path, name), `property name '${name}' is invalid`);
      }
      return valid;
    });
  }
  return checks;
}

/** A declared property, with what its issues need made once. */
interface Member {
  readonly name: string;
  /** `/name`, escaped: appended to the object's path. */
  readonly segment: string;
  readonly check: Check;
  readonly required: boolean;
  readonly missing: string;
}

/**
 * `properties`, `patternProperties` and `additionalProperties`. Without `patternProperties` the declared
 * names are visited first, checking the required ones in the same pass (`requires`), and the instance's
 * other members only when it has some. Issues follow the keywords' order: properties, then the others.
 */
function members(pointer: string, schema: Json, schemas: Subschemas, required: readonly string[]): { check: Check; requires: ReadonlySet<string> } | undefined {
  const properties = isObject(schema["properties"]) ? schema["properties"] : undefined;
  const patterns = isObject(schema["patternProperties"]) ? schema["patternProperties"] : undefined;
  const hasAdditional = Object.hasOwn(schema, "additionalProperties");
  if (!properties && !patterns && !hasAdditional) return undefined;
  const named = new Map<string, Check>();
  for (const name of Object.keys(properties ?? {})) named.set(name, schemas.sub(`${pointer}/properties`, name, properties![name]));
  const additional = hasAdditional ? schemas.sub(pointer, "additionalProperties", schema["additionalProperties"]) : undefined;
  const forbidden = schema["additionalProperties"] === false;
  if (patterns && Object.keys(patterns).length > 0) {
    const patterned = Object.keys(patterns).map((source) => ({ pattern: linear(source), check: schemas.sub(`${pointer}/patternProperties`, source, patterns[source]) }));
    return { check: everyMember(named, patterned, additional, forbidden), requires: new Set() };
  }
  const requires = new Set(required.filter((name) => named.has(name)));
  const declared: Member[] = [...named].map(([name, check]) => ({
    name,
    segment: `/${escapePointerSegment(name)}`,
    check,
    required: requires.has(name),
    missing: `must have required property '${name}'`,
  }));
  const others = additional === undefined ? undefined : otherMembers(named, additional, forbidden);
  const check: Check = (data, path, run, seen) => {
    const object = data as Json;
    let valid = true;
    let found = 0;
    for (let index = 0; index < declared.length; index++) {
      const member = declared[index]!;
      if (!Object.hasOwn(object, member.name)) {
        if (!member.required) continue;
        if (run.issues === null) return false;
        valid = fail(run, path + member.segment, member.missing);
        continue;
      }
      found++;
      if (seen !== undefined) seen.property(member.name);
      if (member.check(object[member.name], run.issues === null ? path : path + member.segment, run, undefined)) continue;
      if (run.issues === null) return false;
      valid = false;
    }
    if (others === undefined) return valid;
    // Every member is declared or evaluated by additionalProperties.
    if (seen !== undefined) seen.allProperties = true;
    if (countEnumerable(object) === found) return valid;
    return others(object, path, run, undefined) && valid;
  };
  return { check, requires };
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

/** additionalProperties over the members `named` does not declare. */
function otherMembers(named: ReadonlyMap<string, Check>, additional: Check, forbidden: boolean): Check {
  return (data, path, run) => {
    const object = data as Json;
    let valid = true;
    for (const name of Object.keys(object)) {
      if (named.has(name)) continue;
      const where = at(run, path, name);
      if (forbidden ? fail(run, where, `must NOT have additional properties: '${name}'`) : additional(object[name], where, run, undefined)) continue;
      if (run.issues === null) return false;
      valid = false;
    }
    return valid;
  };
}

/** With `patternProperties`: one pass over the instance's members, each checked by every schema that applies. */
function everyMember(named: ReadonlyMap<string, Check>, patterned: readonly { pattern: LinearPattern; check: Check }[], additional: Check | undefined, forbidden: boolean): Check {
  return (data, path, run, seen) => {
    const object = data as Json;
    let valid = true;
    for (const name of Object.keys(object)) {
      const value = object[name];
      const where = at(run, path, name);
      const check = named.get(name);
      let matched = check !== undefined;
      if (check !== undefined && !check(value, where, run, undefined)) {
        if (run.issues === null) return false;
        valid = false;
      }
      for (const entry of patterned) {
        if (!entry.pattern.test(name)) continue;
        matched = true;
        if (entry.check(value, where, run, undefined)) continue;
        if (run.issues === null) return false;
        valid = false;
      }
      if (!matched && additional !== undefined) {
        matched = true;
        if (!(forbidden ? fail(run, where, `must NOT have additional properties: '${name}'`) : additional(value, where, run, undefined))) {
          if (run.issues === null) return false;
          valid = false;
        }
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
      checks.push((data, path, run) => {
        if (!Object.hasOwn(data as Json, name)) return true;
        let valid = true;
        for (const other of needed as string[]) {
          if (Object.hasOwn(data as Json, other)) continue;
          if (run.issues === null) return false;
          valid = fail(run, at(run, path, other), `must have property '${other}' when property '${name}' is present`);
        }
        return valid;
      });
    }
  };
  const applying = (keyword: string, source: Json): void => {
    for (const [name, sub] of Object.entries(source)) {
      if (Array.isArray(sub)) continue;
      const check = schemas.sub(`${pointer}/${keyword}`, name, sub);
      checks.push((data, path, run, seen) => !Object.hasOwn(data as Json, name) || check(data, path, run, seen));
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
