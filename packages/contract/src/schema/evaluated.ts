/** Annotations for `unevaluatedProperties` and `unevaluatedItems`: what successful subschemas evaluated. */
export class Evaluated {
  allProperties = false;
  properties: Set<string> | undefined;
  allItems = false;
  items: Set<number> | undefined;

  property(name: string): void {
    if (this.allProperties) return;
    (this.properties ??= new Set()).add(name);
  }

  item(index: number): void {
    if (this.allItems) return;
    (this.items ??= new Set()).add(index);
  }

  /** Items 0 .. count-1. */
  prefix(count: number): void {
    for (let index = 0; index < count; index++) this.item(index);
  }

  hasProperty(name: string): boolean {
    return this.allProperties || this.properties?.has(name) === true;
  }

  hasItem(index: number): boolean {
    return this.allItems || this.items?.has(index) === true;
  }

  /** Adds what a successful subschema evaluated. */
  merge(other: Evaluated): void {
    if (other.allProperties) this.allProperties = true;
    else if (other.properties) for (const name of other.properties) this.property(name);
    if (other.allItems) this.allItems = true;
    else if (other.items) for (const index of other.items) this.item(index);
  }
}
