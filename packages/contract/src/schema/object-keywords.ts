/** The keywords that apply to objects. */
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

/** `properties`, `patternProperties` and `additionalProperties` in one pass over the instance's members. */
/**
 * The members check; where only `properties` apply it also checks the `required` names they declare
 * (`requires`), in the same pass.
 */
function members(pointer: string, schema: Json, schemas: Subschemas, required: readonly string[]): { check: Check; requires: ReadonlySet<string> } | undefined {
  const properties = isObject(schema["properties"]) ? schema["properties"] : undefined;
  const patterns = isObject(schema["patternProperties"]) ? schema["patternProperties"] : undefined;
  const hasAdditional = Object.hasOwn(schema, "additionalProperties");
  if (!properties && !patterns && !hasAdditional) return undefined;
  const named = new Map<string, Check>();
  for (const name of Object.keys(properties ?? {})) named.set(name, schemas.sub(`${pointer}/properties`, name, properties![name]));
  const patterned = Object.keys(patterns ?? {}).map((source) => ({
    pattern: linear(source),
    check: schemas.sub(`${pointer}/patternProperties`, source, patterns![source]),
  }));
  const additional = hasAdditional ? schemas.sub(pointer, "additionalProperties", schema["additionalProperties"]) : undefined;
  const forbidden = schema["additionalProperties"] === false;
  if (patterned.length === 0 && additional === undefined) {
    // Only `properties`: visit the declared names (checking the required ones), no walk over the instance's keys.
    const requires = new Set(required.filter((name) => named.has(name)));
    const declared = [...named].map(([name, check]) => ({ name, check, required: requires.has(name) }));
    const check: Check = (data, path, run, seen) => {
      const object = data as Json;
      let valid = true;
      for (const { name, check, required } of declared) {
        if (!Object.hasOwn(object, name)) {
          if (!required) continue;
          if (run.issues === null) return false;
          valid = fail(run, at(run, path, name), `must have required property '${name}'`);
          continue;
        }
        seen?.property(name);
        if (check(object[name], at(run, path, name), run, undefined)) continue;
        if (run.issues === null) return false;
        valid = false;
      }
      return valid;
    };
    return { check, requires };
  }
  const check: Check = (data, path, run, seen) => {
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
      if (patterned.length > 0) {
        for (const entry of patterned) {
          if (!entry.pattern.test(name)) continue;
          matched = true;
          if (entry.check(value, where, run, undefined)) continue;
          if (run.issues === null) return false;
          valid = false;
        }
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
  return { check, requires: new Set() };
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
