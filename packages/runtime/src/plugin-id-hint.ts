import { closestMatch, didYouMean } from "@toolpact/contract";

/**
 * `; did you mean "com.example.notes"?` for a mistyped plugin id, or the empty string. Ids share long
 * prefixes (`com.example.`), which make any two look close as whole strings: a candidate counts only
 * when its last segment is close to the mistyped id's own last segment too.
 */
export function pluginIdHint(pluginId: string, candidates: Iterable<string>): string {
  const tail = lastSegment(pluginId);
  const near = [...candidates].filter((candidate) => {
    const other = lastSegment(candidate);
    return other === tail || closestMatch(tail, [other]) !== undefined;
  });
  return didYouMean(pluginId, near);
}

function lastSegment(pluginId: string): string {
  return pluginId.slice(pluginId.lastIndexOf(".") + 1);
}
