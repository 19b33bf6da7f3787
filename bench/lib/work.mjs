// The work every compared server does per call: build a small record from a small input.
const ITEMS = new Map(Array.from({ length: 1000 }, (_, i) => [String(i), { id: String(i), name: `item ${i}`, tags: ["a", "b"] }]));

/** Looks an item up by id (a miss answers a placeholder). */
export function lookupItem(id) {
  return ITEMS.get(id) ?? { id, name: "unknown", tags: [] };
}

/** The input of call number `i`: ids cycle through the 1,000 known items. */
export const inputOf = (i) => ({ id: String(i % 1000) });

/** Throws unless `item` is the record for `id`: every measured call checks what it got back. */
export function checkItem(item, id, system) {
  if (item?.id !== id || typeof item.name !== "string") {
    throw new Error(`${system} answered ${JSON.stringify(item)} for item "${id}"`);
  }
}
