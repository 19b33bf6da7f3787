/**
 * Compiles a JSON Schema document (2020-12 or draft-07) into nested closures, once (an object's declared
 * properties into a generated function: declared-members.ts); evaluating them is the whole per-call cost.
 * Two modes share one code path: while only validity is asked (`run.issues` is null, as inside `anyOf`,
 * `not` or `contains`) the first failure ends the evaluation; when issues are wanted, every one is
 * collected, with paths made only for the issues (check.ts).
 */
import { escapePointerSegment } from "../input.js";
import { arrayKeywords } from "./array-keywords.js";
import { all, checkChild, fail, failAt, isObject, linear, number, pass, type Check, type Json, type Subschemas } from "./check.js";
import type { SchemaDialect, SchemaDocument } from "./document.js";
import { Evaluated } from "./evaluated.js";
import { FORMATS } from "./formats.js";
import { MemoSlots } from "./memo.js";
import { codePointLength, isMultipleOf, jsonEqual } from "./json-values.js";
import { objectKeywords } from "./object-keywords.js";

export type { Check, Run } from "./check.js";

const falseSchema: Check = (_data, run) => fail(run, "boolean schema is false");

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

/** Compiles the reachable schemas of one document; schemas referred to more than once are compiled once. */
export class SchemaCompiler implements Subschemas {
  private readonly compiled = new Map<string, Check>();
  /** The checks `$ref` leads to, by target pointer: memoized, since references let many paths share them. */
  private readonly referenced = new Map<string, Check>();
  private readonly slots = new MemoSlots();

  constructor(private readonly document: SchemaDocument) {}

  get dialect(): SchemaDialect {
    return this.document.dialect;
  }

  /** The check of the whole document. */
  root(): Check {
    return this.at("", this.document.root);
  }

  private at(pointer: string, schema: unknown): Check {
    const known = this.compiled.get(pointer);
    if (known) return known;
    // A reference back into a schema being compiled goes through this forward, bound when it is done.
    let done: Check | undefined;
    this.compiled.set(pointer, (data, run, seen) => done!(data, run, seen));
    done = this.build(pointer, schema);
    this.compiled.set(pointer, done);
    return done;
  }

  /** The check a reference to `pointer` runs: one per target, with its results kept per validation (memo.ts). */
  private reference(pointer: string, schema: unknown): Check {
    let check = this.referenced.get(pointer);
    if (!check) this.referenced.set(pointer, (check = this.slots.memoized(this.at(pointer, schema))));
    return check;
  }

  /** The compiled subschema at `pointer/keyword`. */
  sub(pointer: string, keyword: string | number, schema: unknown): Check {
    return this.at(`${pointer}/${escapePointerSegment(keyword)}`, schema);
  }

  private build(pointer: string, schema: unknown): Check {
    if (schema === true) return pass;
    if (schema === false) return falseSchema;
    const json = schema as Json;
    const refs = this.document.refsOf(json).map((keyword) => {
      const target = this.document.resolve(json[keyword] as string)!;
      return this.reference(target.pointer, target.schema);
    });
    if (this.document.dialect === "draft-07" && refs.length > 0) return refs[0]!;
    const checks: Check[] = [...refs, ...this.applicators(pointer, json), ...this.values(json)];
    const type = json["type"];
    const group = type === "integer" ? "number" : type;
    const sole = typeof group === "string" && (TYPE_GROUPS as readonly string[]).includes(group) ? (group as TypeGroup) : undefined;
    // Each group's keywords test the type themselves; with `"type": "<t>"` the group of t also fails other types.
    const typeMessage = sole ? `must be ${type as string}` : undefined;
    const integer = type === "integer";
    const groups: Record<TypeGroup, Check | undefined> = {
      string: this.stringKeywords(json, sole === "string" ? typeMessage : undefined),
      number: this.numberKeywords(json, sole === "number" ? { message: typeMessage!, integer } : undefined),
      object: objectKeywords(pointer, json, this, sole === "object" ? typeMessage : undefined),
      array: arrayKeywords(pointer, json, this, sole === "array" ? typeMessage : undefined),
    };
    if (type !== undefined && (!sole || !groups[sole])) checks.unshift(typeCheck(type as string | string[]));
    else if (sole) checks.unshift(groups[sole]!);
    for (const name of TYPE_GROUPS) if (name !== sole && groups[name]) checks.push(groups[name]);
    const body = all(checks);
    const unevaluated = this.document.dialect === "2020-12" ? this.unevaluated(pointer, json) : undefined;
    if (!unevaluated) return body;
    return (data, run, seen) => {
      const own = new Evaluated();
      let valid = body(data, run, own);
      if (!valid && run.issues === null) return false;
      valid = unevaluated(data, run, own) && valid;
      if (valid) seen?.merge(own);
      return valid;
    };
  }

  /** `enum` and `const`. */
  private values(schema: Json): Check[] {
    const checks: Check[] = [];
    const allowed = schema["enum"];
    if (Array.isArray(allowed)) {
      const message =
        allowed.length === 0 ? "must be equal to one of the allowed values (none are allowed)" : `must be equal to one of: ${listValues(allowed)}`;
      if (allowed.every((value) => typeof value !== "object" || value === null)) {
        const values = new Set<unknown>(allowed);
        checks.push((data, run) => values.has(data) || fail(run, message));
      } else {
        checks.push((data, run) => allowed.some((value) => jsonEqual(value, data)) || fail(run, message));
      }
    }
    if (Object.hasOwn(schema, "const")) {
      const expected = schema["const"];
      const message = `must be equal to ${JSON.stringify(expected)}`;
      checks.push((data, run) => jsonEqual(expected, data) || fail(run, message));
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
      checks.push((data, run) => !not(data, run.memo.validity, undefined) || fail(run, "must NOT be valid"));
    }
    if (Object.hasOwn(schema, "if")) checks.push(this.conditional(pointer, schema));
    return checks;
  }

  private conditional(pointer: string, schema: Json): Check {
    const condition = this.sub(pointer, "if", schema["if"]);
    const then = Object.hasOwn(schema, "then") ? this.sub(pointer, "then", schema["then"]) : undefined;
    const otherwise = Object.hasOwn(schema, "else") ? this.sub(pointer, "else", schema["else"]) : undefined;
    return (data, run, seen) => {
      const conditionSeen = seen && new Evaluated();
      if (condition(data, run.memo.validity, conditionSeen)) {
        if (conditionSeen) seen!.merge(conditionSeen);
        return !then || then(data, run, seen) || fail(run, 'must match "then" schema');
      }
      return !otherwise || otherwise(data, run, seen) || fail(run, 'must match "else" schema');
    };
  }

  /**
   * Length, `pattern` and `format` of a string, in one closure with the type test: other types pass, or
   * fail with `typeMessage` when the schema's `type` is "string".
   */
  private stringKeywords(schema: Json, typeMessage: string | undefined): Check | undefined {
    const minLength = number(schema, "minLength");
    const maxLength = number(schema, "maxLength");
    const source = typeof schema["pattern"] === "string" ? schema["pattern"] : undefined;
    const pattern = source === undefined ? undefined : linear(source);
    const format = formatOf(schema, "string");
    if (minLength === undefined && maxLength === undefined && !pattern && !format) return undefined;
    const other = typeMessage === undefined;
    return (data, run) => {
      if (typeof data !== "string") return other || fail(run, typeMessage);
      if (run.issues === null) {
        return (
          (minLength === undefined || data.length >= minLength * 2 || codePointLength(data) >= minLength) &&
          (maxLength === undefined || data.length <= maxLength || codePointLength(data) <= maxLength) &&
          (!pattern || pattern.test(data)) &&
          (!format || format.test(data))
        );
      }
      let valid = true;
      if (minLength !== undefined && data.length < minLength * 2 && codePointLength(data) < minLength)
        valid = fail(run, `must NOT have fewer than ${minLength} characters`);
      if (maxLength !== undefined && data.length > maxLength && codePointLength(data) > maxLength)
        valid = fail(run, `must NOT have more than ${maxLength} characters`);
      if (pattern && !pattern.test(data)) valid = fail(run, `must match pattern ${JSON.stringify(source)}`);
      if (format && !format.test(data)) valid = fail(run, format.message);
      return valid;
    };
  }

  /**
   * Bounds, `multipleOf` and `format` of a number, in one closure with the type test: other types pass, or
   * fail with `typed.message` when the schema's `type` is "number" or "integer".
   */
  private numberKeywords(schema: Json, typed: { message: string; integer: boolean } | undefined): Check | undefined {
    const minimum = number(schema, "minimum");
    const maximum = number(schema, "maximum");
    const exclusiveMinimum = number(schema, "exclusiveMinimum");
    const exclusiveMaximum = number(schema, "exclusiveMaximum");
    const multipleOf = number(schema, "multipleOf");
    const format = formatOf(schema, "number");
    const bounds = [minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf];
    if (bounds.every((bound) => bound === undefined) && !format) return undefined;
    const integer = typed?.integer === true;
    return (data, run) => {
      if (typeof data !== "number") return typed === undefined || fail(run, typed.message);
      if (typed !== undefined && !(integer ? Number.isInteger(data) : Number.isFinite(data))) return fail(run, typed.message);
      // Cheap comparisons first; messages are made only for a failure.
      if (
        (minimum === undefined || data >= minimum) &&
        (maximum === undefined || data <= maximum) &&
        (exclusiveMinimum === undefined || data > exclusiveMinimum) &&
        (exclusiveMaximum === undefined || data < exclusiveMaximum) &&
        (multipleOf === undefined || (Number.isFinite(data) && isMultipleOf(data, multipleOf))) &&
        (!format || format.test(data))
      ) {
        return true;
      }
      if (run.issues === null) return false;
      if (minimum !== undefined && !(data >= minimum)) fail(run, `must be >= ${minimum}`);
      if (maximum !== undefined && !(data <= maximum)) fail(run, `must be <= ${maximum}`);
      if (exclusiveMinimum !== undefined && !(data > exclusiveMinimum)) fail(run, `must be > ${exclusiveMinimum}`);
      if (exclusiveMaximum !== undefined && !(data < exclusiveMaximum)) fail(run, `must be < ${exclusiveMaximum}`);
      if (multipleOf !== undefined && !(Number.isFinite(data) && isMultipleOf(data, multipleOf))) fail(run, `must be multiple of ${multipleOf}`);
      if (format && !format.test(data)) fail(run, format.message);
      return false;
    };
  }

  /** `unevaluatedProperties` and `unevaluatedItems`: run after every other keyword, on what none evaluated. */
  private unevaluated(pointer: string, schema: Json): Check | undefined {
    const properties = Object.hasOwn(schema, "unevaluatedProperties") ? this.sub(pointer, "unevaluatedProperties", schema["unevaluatedProperties"]) : undefined;
    const items = Object.hasOwn(schema, "unevaluatedItems") ? this.sub(pointer, "unevaluatedItems", schema["unevaluatedItems"]) : undefined;
    if (!properties && !items) return undefined;
    const noProperties = schema["unevaluatedProperties"] === false;
    const noItems = schema["unevaluatedItems"] === false;
    return (data, run, seen) => {
      const own = seen!;
      let valid = true;
      if (properties && isObject(data)) {
        for (const name of Object.keys(data)) {
          if (own.hasProperty(name)) continue;
          const ok = noProperties ? failAt(run, name, `must NOT have unevaluated properties: '${name}'`) : checkChild(properties, data[name], name, run);
          if (ok) continue;
          if (run.issues === null) return false;
          valid = false;
        }
        own.allProperties = true;
      }
      if (items && Array.isArray(data)) {
        for (let index = 0; index < data.length; index++) {
          if (own.hasItem(index)) continue;
          const ok = noItems ? failAt(run, index, "must NOT have unevaluated items") : checkChild(items, data[index], index, run);
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

function formatOf(schema: Json, type: "string" | "number"): { test: (value: unknown) => boolean; message: string } | undefined {
  const name = schema["format"];
  const format = typeof name === "string" ? FORMATS.get(name) : undefined;
  if (!format || format.type !== type) return undefined;
  return { test: format.check as (value: unknown) => boolean, message: `must match format ${JSON.stringify(name)}` };
}

const TYPE_GROUPS = ["string", "number", "object", "array"] as const;
type TypeGroup = (typeof TYPE_GROUPS)[number];

/** `"type": "<t>"` without keywords of its own: one closure per type, so the test is inline. */
function typeThen(type: string): Check {
  const message = `must be ${type}`;
  switch (type) {
    case "string":
      return (data, run) => typeof data === "string" || fail(run, message);
    case "boolean":
      return (data, run) => typeof data === "boolean" || fail(run, message);
    case "object":
      return (data, run) => (typeof data === "object" && data !== null && !Array.isArray(data)) || fail(run, message);
    case "array":
      return (data, run) => Array.isArray(data) || fail(run, message);
    case "number":
      return (data, run) => (typeof data === "number" && Number.isFinite(data)) || fail(run, message);
    case "integer":
      return (data, run) => (typeof data === "number" && Number.isInteger(data)) || fail(run, message);
    case "null":
      return (data, run) => data === null || fail(run, message);
    default:
      return (_data, run) => fail(run, message);
  }
}

/** `type` with several names, or one without keywords of its own. */
function typeCheck(type: string | string[]): Check {
  const names = Array.isArray(type) ? type : [type];
  const tests = names.map((name) => TYPES[name] ?? (() => false));
  const message = `must be ${names.join(" or ")}`;
  if (names.length === 1) return typeThen(names[0]!);
  return (data, run) => tests.some((test) => test(data)) || fail(run, message);
}

function anyOfCheck(branches: readonly Check[]): Check {
  return (data, run, seen) => {
    if (!seen) {
      for (const branch of branches) if (branch(data, run.memo.validity, undefined)) return true;
    } else {
      // Annotations come from every branch that passes, so none is skipped.
      let passed = false;
      for (const branch of branches) {
        const branchSeen = new Evaluated();
        if (!branch(data, run.memo.validity, branchSeen)) continue;
        passed = true;
        seen.merge(branchSeen);
      }
      if (passed) return true;
    }
    if (run.issues !== null) for (const branch of branches) branch(data, run, undefined);
    return fail(run, "must match a schema in anyOf");
  };
}

function oneOfCheck(branches: readonly Check[]): Check {
  return (data, run, seen) => {
    let passing = 0;
    let passedSeen: Evaluated | undefined;
    for (const branch of branches) {
      const branchSeen = seen && new Evaluated();
      if (!branch(data, run.memo.validity, branchSeen)) continue;
      passing++;
      passedSeen = branchSeen;
      if (passing > 1) break;
    }
    if (passing === 1) {
      if (passedSeen) seen!.merge(passedSeen);
      return true;
    }
    if (passing === 0 && run.issues !== null) for (const branch of branches) branch(data, run, undefined);
    return fail(run, "must match exactly one schema in oneOf");
  };
}
