/** The keywords that apply to arrays. */
import { at, fail, number, VALIDITY_ONLY, type Check, type Json, type Subschemas } from "./check.js";
import { firstDuplicate } from "./json-values.js";

/** Keywords of arrays: item schemas, counts, `uniqueItems`, `contains`. */
export function arrayKeywords(pointer: string, schema: Json, schemas: Subschemas): Check[] {
  const checks: Check[] = [...itemSchemas(pointer, schema, schemas)];
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
  if (Object.hasOwn(schema, "contains")) checks.push(contains(pointer, schema, schemas));
  return checks;
}

/** `prefixItems` and `items` (2020-12), or `items` and `additionalItems` (draft-07). */
function itemSchemas(pointer: string, schema: Json, schemas: Subschemas): Check[] {
  const draft07 = schemas.dialect === "draft-07";
  const tuple = draft07 ? schema["items"] : schema["prefixItems"];
  const prefix = Array.isArray(tuple) ? tuple.map((item, index) => schemas.sub(`${pointer}/${draft07 ? "items" : "prefixItems"}`, index, item)) : [];
  const restKeyword = draft07 ? (Array.isArray(tuple) ? "additionalItems" : "items") : "items";
  const rest = Object.hasOwn(schema, restKeyword) ? schemas.sub(pointer, restKeyword, schema[restKeyword]) : undefined;
  if (prefix.length === 0 && !rest) return [];
  const forbidden = schema[restKeyword] === false;
  if (prefix.length === 0 && !forbidden) return [everyItem(rest!)];
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

/** `items` without `prefixItems`: one schema for every item. */
function everyItem(check: Check): Check {
  return (data, path, run, seen) => {
    const items = data as unknown[];
    let valid = true;
    for (let index = 0; index < items.length; index++) {
      if (check(items[index], run.issues === null ? path : `${path}/${index}`, run, undefined)) continue;
      if (run.issues === null) return false;
      valid = false;
    }
    if (seen) seen.allItems = true;
    return valid;
  };
}

function contains(pointer: string, schema: Json, schemas: Subschemas): Check {
  const check = schemas.sub(pointer, "contains", schema["contains"]);
  const draft07 = schemas.dialect === "draft-07";
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
