/** `T` with `undefined` taken out of each property's type (optional properties stay optional). */
export type WithoutUndefined<T> = { [K in keyof T]: Exclude<T[K], undefined> };

/**
 * A copy of `value` without its undefined properties: what exact optional property types want from a
 * schema's optional outputs or a row's NULL columns.
 * @example withoutUndefined({ runId: undefined, tool: "x" }) // { tool: "x" }
 */
export function withoutUndefined<T extends object>(value: T): WithoutUndefined<T> {
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out as WithoutUndefined<T>;
}
