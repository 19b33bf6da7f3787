/**
 * Compiles a JSON Schema document (2020-12 or draft-07) into nested closures, once; evaluating them is
 * the whole per-call cost. Two modes share one code path: while only validity is asked (`run.issues` is
 * null) the first failure ends the evaluation; when issues are wanted, every one is collected.
 */
import type { ValidationIssue } from "../errors.js";
import { escapePointerSegment } from "../input.js";
import { compileLinearPattern, type LinearPattern } from "../pattern/linear-pattern.js";
import type { SchemaDocument } from "./document.js";
import { Evaluated } from "./evaluated.js";
import { FORMATS } from "./formats.js";
import { codePointLength, firstDuplicate, isMultipleOf, jsonEqual } from "./json-values.js";

/** Where issues go; null while only validity is asked. */
export interface Run {
  readonly issues: ValidationIssue[] | null;
}

/** Validity only: the first failure ends the evaluation. */
export const VALIDITY_ONLY: Run = Object.freeze({ issues: null });

/** One compiled schema: evaluates `data` at `path`, recording into `seen` what it evaluated (for unevaluated*). */
export type Check = (data: unknown, path: string, run: Run, seen: Evaluated | undefined) => boolean;

type Json = Record<string, unknown>;

const pass: Check = () => true;
const falseSchema: Check = (_data, path, run) => fail(run, path, "boolean schema is false");

function fail(run: Run, path: string, message: string): false {
  run.issues?.push({ path, message });
  return false;
}

function at(run: Run, path: string, key: string | number): string {
  return run.issues === null ? path : `${path}/${escapePointerSegment(key)}`;
}

function isObject(data: unknown): data is Json {
  return typeof data === "object" && data !== null && !Array.isArray(data);
}

const TYPES: Readonly<Record<string, (data: unknown) => boolean>> = {
  string: (data) => typeof data === "string",
  number: (data) => typeof data === "number" && Number.isFinite(data),
  integer: (data) => typeof data === "number" && Number.isInteger(data),
  boolean: (data) => typeof data === "boolean",
  null: (data) => data === null,
  array: (data) => Array.isArray(data),
  object: isObject,
};

const LISTED_VALUES = 12;

function listValues(values: readonly unknown[]): string {
  const shown = values.slice(0, LISTED_VALUES).map((value) => JSON.stringify(value));
  const rest = values.length - shown.length;
  return rest > 0 ? `${shown.join(", ")} and ${rest} more` : shown.join(", ");
}

/** Runs checks in order: all of them when collecting issues, up to the first failure otherwise. */
function all(checks: readonly Check[]): Check {
  if (checks.length === 0) return pass;
  if (checks.length === 1) return checks[0]!;
  return (data, path, run, seen) => {
    let valid = true;
    for (const check of checks) {
      if (!check(data, path, run, seen)) {
        if (run.issues === null) return false;
        valid = false;
      }
    }
    return valid;
  };
}

function number(schema: Json, keyword: string): number | undefined {
  const value = schema[keyword];
  return typeof value === "number" ? value : undefined;
}

function linear(source: string): LinearPattern {
  const compiled = compileLinearPattern(source);
  // SchemaDocument refuses every pattern that does not compile before the compiler runs.
  if (!compiled.ok) throw new Error(`pattern ${JSON.stringify(source)} was not refused before compilation`);
  return compiled.pattern;
}

/** Compiles the reachable schemas of one document; schemas referred to more than once are compiled once. */
export class SchemaCompiler {
  private readonly compiled = new Map<string, Check>();

  constructor(private readonly document: SchemaDocument) {}

  /** The check of the whole document. */
  root(): Check {
    return this.at("", this.document.root);
  }

  private at(pointer: string, schema: unknown): Check {
    const known = this.compiled.get(pointer);
    if (known) return known;
    // A reference back into a schema being compiled goes through this forward, bound when it is done.
    let done: Check | undefined;
    this.compiled.set(pointer, (data, path, run, seen) => done!(data, path, run, seen));
    done = this.build(pointer, schema);
    this.compiled.set(pointer, done);
    return done;
  }

  private sub(pointer: string, keyword: string | number, schema: unknown): Check {
    return this.at(`${pointer}/${escapePointerSegment(keyword)}`, schema);
  }

  private build(pointer: string, schema: unknown): Check {
    if (schema === true) return pass;
    if (schema === false) return falseSchema;
    const json = schema as Json;
    const refs = this.document.refsOf(json).map((keyword) => {
      const target = this.document.resolve(json[keyword] as string)!;
      return this.at(target.pointer, target.schema);
    });
    if (this.document.dialect === "draft-07" && refs.length > 0) return refs[0]!;
    const checks: Check[] = [
      ...refs,
      ...this.applicators(pointer, json),
      ...this.generic(json),
      ...this.typed("string", this.stringKeywords(json)),
      ...this.typed("number", this.numberKeywords(json)),
      ...this.typed("object", this.objectKeywords(pointer, json)),
      ...this.typed("array", this.arrayKeywords(pointer, json)),
    ];
    const body = all(checks);
    const unevaluated = this.document.dialect === "2020-12" ? this.unevaluated(pointer, json) : undefined;
    if (!unevaluated) return body;
    return (data, path, run, seen) => {
      const own = new Evaluated();
      let valid = body(data, path, run, own);
      if (!valid && run.issues === null) return false;
      valid = unevaluated(data, path, run, own) && valid;
      if (valid) seen?.merge(own);
      return valid;
    };
  }

  private typed(type: "string" | "number" | "object" | "array", checks: Check[]): Check[] {
    if (checks.length === 0) return [];
    const body = all(checks);
    switch (type) {
      case "string":
        return [(data, path, run, seen) => typeof data !== "string" || body(data, path, run, seen)];
      case "number":
        return [(data, path, run, seen) => typeof data !== "number" || body(data, path, run, seen)];
      case "object":
        return [(data, path, run, seen) => !isObject(data) || body(data, path, run, seen)];
      case "array":
        return [(data, path, run, seen) => !Array.isArray(data) || body(data, path, run, seen)];
    }
  }

  private generic(schema: Json): Check[] {
    const checks: Check[] = [];
    const type = schema["type"];
    if (type !== undefined) {
      const names = (Array.isArray(type) ? type : [type]) as string[];
      const tests = names.map((name) => TYPES[name] ?? (() => false));
      const message = `must be ${names.join(" or ")}`;
      checks.push(
        tests.length === 1
          ? (data, path, run) => tests[0]!(data) || fail(run, path, message)
          : (data, path, run) => tests.some((test) => test(data)) || fail(run, path, message),
      );
    }
    const allowed = schema["enum"];
    if (Array.isArray(allowed)) {
      const message = allowed.length === 0 ? "must be equal to one of the allowed values (none are allowed)" : `must be equal to one of: ${listValues(allowed)}`;
      if (allowed.every((value) => typeof value !== "object" || value === null)) {
        const values = new Set<unknown>(allowed);
        checks.push((data, path, run) => values.has(data) || fail(run, path, message));
      } else {
        checks.push((data, path, run) => allowed.some((value) => jsonEqual(value, data)) || fail(run, path, message));
      }
    }
    if (Object.hasOwn(schema, "const")) {
      const expected = schema["const"];
      const message = `must be equal to ${JSON.stringify(expected)}`;
      checks.push((data, path, run) => jsonEqual(expected, data) || fail(run, path, message));
    }
    return checks;
  }

  private applicators(pointer: string, schema: Json): Check[] {
    const checks: Check[] = [];
    const list = (keyword: string): Check[] | undefined => {
      const value = schema[keyword];
      return Array.isArray(value) ? value.map((item, index) => this.sub(`${pointer}/${keyword}`, index, item)) : undefined;
    };
    const allOf = list("allOf");
    if (allOf) checks.push(all(allOf));
    const anyOf = list("anyOf");
    if (anyOf) checks.push(anyOfCheck(anyOf));
    const oneOf = list("oneOf");
    if (oneOf) checks.push(oneOfCheck(oneOf));
    if (Object.hasOwn(schema, "not")) {
      const not = this.sub(pointer, "not", schema["not"]);
      checks.push((data, path, run) => !not(data, path, VALIDITY_ONLY, undefined) || fail(run, path, "must NOT be valid"));
    }
    if (Object.hasOwn(schema, "if")) checks.push(this.conditional(pointer, schema));
    return checks;
  }

  private conditional(pointer: string, schema: Json): Check {
    const condition = this.sub(pointer, "if", schema["if"]);
    const then = Object.hasOwn(schema, "then") ? this.sub(pointer, "then", schema["then"]) : undefined;
    const otherwise = Object.hasOwn(schema, "else") ? this.sub(pointer, "else", schema["else"]) : undefined;
    return (data, path, run, seen) => {
      const conditionSeen = seen && new Evaluated();
      if (condition(data, path, VALIDITY_ONLY, conditionSeen)) {
        if (conditionSeen) seen!.merge(conditionSeen);
        return !then || then(data, path, run, seen) || fail(run, path, 'must match "then" schema');
      }
      return !otherwise || otherwise(data, path, run, seen) || fail(run, path, 'must match "else" schema');
    };
  }

  private stringKeywords(schema: Json): Check[] {
    const checks: Check[] = [];
    const minLength = number(schema, "minLength");
    if (minLength !== undefined) {
      const message = `must NOT have fewer than ${minLength} characters`;
      checks.push((data, path, run) => (data as string).length >= minLength * 2 || codePointLength(data as string) >= minLength || fail(run, path, message));
    }
    const maxLength = number(schema, "maxLength");
    if (maxLength !== undefined) {
      const message = `must NOT have more than ${maxLength} characters`;
      checks.push((data, path, run) => (data as string).length <= maxLength || codePointLength(data as string) <= maxLength || fail(run, path, message));
    }
    if (typeof schema["pattern"] === "string") {
      const pattern = linear(schema["pattern"]);
      const message = `must match pattern ${JSON.stringify(schema["pattern"])}`;
      checks.push((data, path, run) => pattern.test(data as string) || fail(run, path, message));
    }
    return [...checks, ...formatCheck(schema, "string")];
  }

  private numberKeywords(schema: Json): Check[] {
    const checks: Check[] = [];
    const bound = (keyword: string, holds: (data: number, limit: number) => boolean, relation: string): void => {
      const limit = number(schema, keyword);
      if (limit === undefined) return;
      const message = `must be ${relation} ${limit}`;
      checks.push((data, path, run) => holds(data as number, limit) || fail(run, path, message));
    };
    bound("minimum", (data, limit) => data >= limit, ">=");
    bound("maximum", (data, limit) => data <= limit, "<=");
    bound("exclusiveMinimum", (data, limit) => data > limit, ">");
    bound("exclusiveMaximum", (data, limit) => data < limit, "<");
    bound("multipleOf", (data, limit) => Number.isFinite(data) && isMultipleOf(data, limit), "multiple of");
    return [...checks, ...formatCheck(schema, "number")];
  }

  private objectKeywords(pointer: string, schema: Json): Check[] {
    const checks: Check[] = [];
    const members = this.members(pointer, schema);
    if (members) checks.push(members);
    const required = schema["required"];
    if (Array.isArray(required) && required.length > 0) {
      checks.push((data, path, run) => {
        let valid = true;
        for (const name of required as string[]) {
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
    checks.push(...this.dependencies(pointer, schema));
    if (Object.hasOwn(schema, "propertyNames")) {
      const names = this.sub(pointer, "propertyNames", schema["propertyNames"]);
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
  private members(pointer: string, schema: Json): Check | undefined {
    const properties = isObject(schema["properties"]) ? schema["properties"] : undefined;
    const patterns = isObject(schema["patternProperties"]) ? schema["patternProperties"] : undefined;
    const hasAdditional = Object.hasOwn(schema, "additionalProperties");
    if (!properties && !patterns && !hasAdditional) return undefined;
    const named = new Map<string, Check>();
    for (const name of Object.keys(properties ?? {})) named.set(name, this.sub(`${pointer}/properties`, name, properties![name]));
    const patterned = Object.keys(patterns ?? {}).map((source) => ({
      pattern: linear(source),
      check: this.sub(`${pointer}/patternProperties`, source, patterns![source]),
    }));
    const additional = hasAdditional ? this.sub(pointer, "additionalProperties", schema["additionalProperties"]) : undefined;
    const forbidden = schema["additionalProperties"] === false;
    return (data, path, run, seen) => {
      const object = data as Json;
      let valid = true;
      for (const name of Object.keys(object)) {
        let matched = false;
        const value = object[name];
        const check = named.get(name);
        if (check) {
          matched = true;
          if (!check(value, at(run, path, name), run, undefined)) {
            if (run.issues === null) return false;
            valid = false;
          }
        }
        for (const entry of patterned) {
          if (!entry.pattern.test(name)) continue;
          matched = true;
          if (!entry.check(value, at(run, path, name), run, undefined)) {
            if (run.issues === null) return false;
            valid = false;
          }
        }
        if (!matched && additional) {
          matched = true;
          const ok = forbidden
            ? fail(run, at(run, path, name), `must NOT have additional properties: '${name}'`)
            : additional(value, at(run, path, name), run, undefined);
          if (!ok) {
            if (run.issues === null) return false;
            valid = false;
          }
        }
        if (matched) seen?.property(name);
      }
      return valid;
    };
  }

  private dependencies(pointer: string, schema: Json): Check[] {
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
        const check = this.sub(`${pointer}/${keyword}`, name, sub);
        checks.push((data, path, run, seen) => !Object.hasOwn(data as Json, name) || check(data, path, run, seen));
      }
    };
    if (this.document.dialect === "2020-12") {
      if (isObject(schema["dependentRequired"])) requiring(schema["dependentRequired"]);
      if (isObject(schema["dependentSchemas"])) applying("dependentSchemas", schema["dependentSchemas"]);
    } else if (isObject(schema["dependencies"])) {
      requiring(schema["dependencies"]);
      applying("dependencies", schema["dependencies"]);
    }
    return checks;
  }

  private arrayKeywords(pointer: string, schema: Json): Check[] {
    const checks: Check[] = [...this.itemSchemas(pointer, schema)];
    const minItems = number(schema, "minItems");
    if (minItems !== undefined) {
      const message = `must NOT have fewer than ${minItems} items`;
      checks.push((data, path, run) => (data as unknown[]).length >= minItems || fail(run, path, message));
    }
    const maxItems = number(schema, "maxItems");
    if (maxItems !== undefined) {
      const message = `must NOT have more than ${maxItems} items`;
      checks.push((data, path, run) => (data as unknown[]).length <= maxItems || fail(run, path, message));
    }
    if (schema["uniqueItems"] === true) {
      checks.push((data, path, run) => {
        const duplicate = firstDuplicate(data as unknown[]);
        if (!duplicate) return true;
        return fail(run, path, `must NOT have duplicate items (items ## ${duplicate[0]} and ${duplicate[1]} are identical)`);
      });
    }
    if (Object.hasOwn(schema, "contains")) checks.push(this.contains(pointer, schema));
    return checks;
  }

  /** `prefixItems` and `items` (2020-12), or `items` and `additionalItems` (draft-07). */
  private itemSchemas(pointer: string, schema: Json): Check[] {
    const draft07 = this.document.dialect === "draft-07";
    const tuple = draft07 ? schema["items"] : schema["prefixItems"];
    const prefix = Array.isArray(tuple) ? tuple.map((item, index) => this.sub(`${pointer}/${draft07 ? "items" : "prefixItems"}`, index, item)) : [];
    const restKeyword = draft07 ? (Array.isArray(tuple) ? "additionalItems" : "items") : "items";
    const rest = Object.hasOwn(schema, restKeyword) ? this.sub(pointer, restKeyword, schema[restKeyword]) : undefined;
    if (prefix.length === 0 && !rest) return [];
    const forbidden = schema[restKeyword] === false;
    return [
      (data, path, run, seen) => {
        const items = data as unknown[];
        let valid = true;
        const count = Math.min(items.length, prefix.length);
        for (let index = 0; index < count; index++) {
          if (prefix[index]!(items[index], at(run, path, index), run, undefined)) continue;
          if (run.issues === null) return false;
          valid = false;
        }
        seen?.prefix(count);
        if (!rest || items.length <= prefix.length) return valid;
        if (forbidden) return fail(run, path, `must NOT have more than ${prefix.length} items`);
        for (let index = prefix.length; index < items.length; index++) {
          if (rest(items[index], at(run, path, index), run, undefined)) continue;
          if (run.issues === null) return false;
          valid = false;
        }
        if (seen) seen.allItems = true;
        return valid;
      },
    ];
  }

  private contains(pointer: string, schema: Json): Check {
    const check = this.sub(pointer, "contains", schema["contains"]);
    const draft07 = this.document.dialect === "draft-07";
    const min = draft07 ? 1 : (number(schema, "minContains") ?? 1);
    const max = draft07 ? undefined : number(schema, "maxContains");
    return (data, path, run, seen) => {
      const items = data as unknown[];
      let count = 0;
      for (let index = 0; index < items.length; index++) {
        if (!check(items[index], path, VALIDITY_ONLY, undefined)) continue;
        count++;
        seen?.item(index);
        if (!seen && count >= min && max === undefined) return true;
      }
      if (count < min) return fail(run, path, `must contain at least ${min} valid item(s)`);
      if (max !== undefined && count > max) return fail(run, path, `must contain at most ${max} valid item(s)`);
      return true;
    };
  }

  /** `unevaluatedProperties` and `unevaluatedItems`: run after every other keyword, on what none evaluated. */
  private unevaluated(pointer: string, schema: Json): Check | undefined {
    const properties = Object.hasOwn(schema, "unevaluatedProperties") ? this.sub(pointer, "unevaluatedProperties", schema["unevaluatedProperties"]) : undefined;
    const items = Object.hasOwn(schema, "unevaluatedItems") ? this.sub(pointer, "unevaluatedItems", schema["unevaluatedItems"]) : undefined;
    if (!properties && !items) return undefined;
    const noProperties = schema["unevaluatedProperties"] === false;
    const noItems = schema["unevaluatedItems"] === false;
    return (data, path, run, seen) => {
      const own = seen!;
      let valid = true;
      if (properties && isObject(data)) {
        for (const name of Object.keys(data)) {
          if (own.hasProperty(name)) continue;
          const ok = noProperties
            ? fail(run, at(run, path, name), `must NOT have unevaluated properties: '${name}'`)
            : properties(data[name], at(run, path, name), run, undefined);
          if (ok) continue;
          if (run.issues === null) return false;
          valid = false;
        }
        own.allProperties = true;
      }
      if (items && Array.isArray(data)) {
        for (let index = 0; index < data.length; index++) {
          if (own.hasItem(index)) continue;
          const ok = noItems ? fail(run, at(run, path, index), "must NOT have unevaluated items") : items(data[index], at(run, path, index), run, undefined);
          if (ok) continue;
          if (run.issues === null) return false;
          valid = false;
        }
        own.allItems = true;
      }
      return valid;
    };
  }
}

function formatCheck(schema: Json, type: "string" | "number"): Check[] {
  const name = schema["format"];
  const format = typeof name === "string" ? FORMATS.get(name) : undefined;
  if (!format || format.type !== type) return [];
  const test = format.check as (value: unknown) => boolean;
  const message = `must match format ${JSON.stringify(name)}`;
  return [(data, path, run) => test(data) || fail(run, path, message)];
}

function anyOfCheck(branches: readonly Check[]): Check {
  return (data, path, run, seen) => {
    if (!seen) {
      for (const branch of branches) if (branch(data, path, VALIDITY_ONLY, undefined)) return true;
    } else {
      // Annotations come from every branch that passes, so none is skipped.
      let passed = false;
      for (const branch of branches) {
        const branchSeen = new Evaluated();
        if (!branch(data, path, VALIDITY_ONLY, branchSeen)) continue;
        passed = true;
        seen.merge(branchSeen);
      }
      if (passed) return true;
    }
    if (run.issues !== null) for (const branch of branches) branch(data, path, run, undefined);
    return fail(run, path, "must match a schema in anyOf");
  };
}

function oneOfCheck(branches: readonly Check[]): Check {
  return (data, path, run, seen) => {
    let passing = 0;
    let passedSeen: Evaluated | undefined;
    for (const branch of branches) {
      const branchSeen = seen && new Evaluated();
      if (!branch(data, path, VALIDITY_ONLY, branchSeen)) continue;
      passing++;
      passedSeen = branchSeen;
      if (passing > 1) break;
    }
    if (passing === 1) {
      if (passedSeen) seen!.merge(passedSeen);
      return true;
    }
    if (passing === 0 && run.issues !== null) for (const branch of branches) branch(data, path, run, undefined);
    return fail(run, path, "must match exactly one schema in oneOf");
  };
}
