/** The keywords that apply to arrays. */
import { all, checkChild, fail, number, segmentOf, within, type Check, type Json, type Subschemas } from "./check.js";
import { firstDuplicate } from "./json-values.js";

/**
 * Keywords of arrays (item schemas, counts, `uniqueItems`, `contains`) behind one test of the type: other
 * types pass, or fail with `typeMessage` when the schema's `type` is "array".
 */
export function arrayKeywords(pointer: string, schema: Json, schemas: Subschemas, typeMessage: string | undefined): Check | undefined {
  const minItems = number(schema, "minItems");
  const maxItems = number(schema, "maxItems");
  const other = otherArrayKeywords(pointer, schema, schemas);
  const items = itemSchemas(pointer, schema, schemas);
  if (other.length === 0 && items === undefined && minItems === undefined && maxItems === undefined) return undefined;
  // The common case, one item schema and counts at most, in one closure with the type test.
  if (other.length === 0 && (items === undefined || items.every)) return everyItem(items?.every, { minItems, maxItems, typeMessage });
  const body = all([...(items ? [items.check] : []), ...counts(minItems, maxItems), ...other]);
  const passOthers = typeMessage === undefined;
  return (data, run, seen) => (Array.isArray(data) ? body(data, run, seen) : passOthers || fail(run, typeMessage));
}

function counts(minItems: number | undefined, maxItems: number | undefined): Check[] {
  const checks: Check[] = [];
  if (minItems !== undefined) {
    const message = `must NOT have fewer than ${minItems} items`;
    checks.push((data, run) => (data as unknown[]).length >= minItems || fail(run, message));
  }
  if (maxItems !== undefined) {
    const message = `must NOT have more than ${maxItems} items`;
    checks.push((data, run) => (data as unknown[]).length <= maxItems || fail(run, message));
  }
  return checks;
}

/** `uniqueItems` and `contains`. */
function otherArrayKeywords(pointer: string, schema: Json, schemas: Subschemas): Check[] {
  const checks: Check[] = [];
  if (schema["uniqueItems"] === true) {
    checks.push((data, run) => {
      const duplicate = firstDuplicate(data as unknown[]);
      if (!duplicate) return true;
      return fail(run, `must NOT have duplicate items (items ## ${duplicate[0]} and ${duplicate[1]} are identical)`);
    });
  }
  if (Object.hasOwn(schema, "contains")) checks.push(contains(pointer, schema, schemas));
  return checks;
}

/**
 * `prefixItems` and `items` (2020-12), or `items` and `additionalItems` (draft-07); `every` is the schema of
 * every item when there is no tuple.
 */
function itemSchemas(pointer: string, schema: Json, schemas: Subschemas): { check: Check; every?: Check } | undefined {
  const draft07 = schemas.dialect === "draft-07";
  const tuple = draft07 ? schema["items"] : schema["prefixItems"];
  const prefix = Array.isArray(tuple) ? tuple.map((item, index) => schemas.sub(`${pointer}/${draft07 ? "items" : "prefixItems"}`, index, item)) : [];
  const restKeyword = draft07 ? (Array.isArray(tuple) ? "additionalItems" : "items") : "items";
  const rest = Object.hasOwn(schema, restKeyword) ? schemas.sub(pointer, restKeyword, schema[restKeyword]) : undefined;
  if (prefix.length === 0 && !rest) return undefined;
  const forbidden = schema[restKeyword] === false;
  if (prefix.length === 0 && !forbidden) return { check: everyItem(rest, {}), every: rest! };
  return {
    check: (data, run, seen) => {
      const items = data as unknown[];
      let valid = true;
      const count = Math.min(items.length, prefix.length);
      for (let index = 0; index < count; index++) {
        if (checkChild(prefix[index]!, items[index], index, run)) continue;
        if (run.issues === null) return false;
        valid = false;
      }
      seen?.prefix(count);
      if (!rest || items.length <= prefix.length) return valid;
      if (forbidden) return fail(run, `must NOT have more than ${prefix.length} items`);
      for (let index = prefix.length; index < items.length; index++) {
        if (checkChild(rest, items[index], index, run)) continue;
        if (run.issues === null) return false;
        valid = false;
      }
      if (seen) seen.allItems = true;
      return valid;
    },
  };
}

/**
 * One schema for every item (or none), the item counts, and, with `typeMessage`, the array type: one
 * closure. Counts are tested first for validity; issues keep the keywords' order (items, then counts).
 */
function everyItem(
  check: Check | undefined,
  options: { minItems?: number | undefined; maxItems?: number | undefined; typeMessage?: string | undefined },
): Check {
  const { minItems = 0, maxItems = Infinity, typeMessage } = options;
  const tooFew = `must NOT have fewer than ${minItems} items`;
  const tooMany = `must NOT have more than ${maxItems} items`;
  return (data, run, seen) => {
    if (!Array.isArray(data)) return typeMessage === undefined || fail(run, typeMessage);
    const issues = run.issues;
    const length = data.length;
    if (issues === null && (length < minItems || length > maxItems)) return false;
    let valid = true;
    if (check !== undefined) {
      for (let index = 0; index < length; index++) {
        if (issues === null) {
          if (!check(data[index], run, undefined)) return false;
          continue;
        }
        const from = issues.length;
        if (check(data[index], run, undefined)) continue;
        within(issues, from, segmentOf(index));
        valid = false;
      }
      if (seen) seen.allItems = true;
    }
    if (length < minItems) valid = fail(run, tooFew);
    if (length > maxItems) valid = fail(run, tooMany);
    return valid;
  };
}

function contains(pointer: string, schema: Json, schemas: Subschemas): Check {
  const check = schemas.sub(pointer, "contains", schema["contains"]);
  const draft07 = schemas.dialect === "draft-07";
  const min = draft07 ? 1 : (number(schema, "minContains") ?? 1);
  const max = draft07 ? undefined : number(schema, "maxContains");
  return (data, run, seen) => {
    const items = data as unknown[];
    let count = 0;
    for (let index = 0; index < items.length; index++) {
      if (!check(items[index], run.memo.validity, undefined)) continue;
      count++;
      seen?.item(index);
      if (!seen && count >= min && max === undefined) return true;
    }
    if (count < min) return fail(run, `must contain at least ${min} valid item(s)`);
    if (max !== undefined && count > max) return fail(run, `must contain at most ${max} valid item(s)`);
    return true;
  };
}
