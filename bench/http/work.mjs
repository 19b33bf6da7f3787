// The work both benchmarked servers do per call: build a small record from the input.
const ITEMS = new Map(Array.from({ length: 1000 }, (_, i) => [String(i), { id: String(i), name: `item ${i}`, tags: ["a", "b"] }]));

/** Looks up an item by id (a miss answers a placeholder). */
export function lookupItem(id) {
  return ITEMS.get(id) ?? { id, name: "unknown", tags: [] };
}
