/**
 * Which tool a `tools/call` names, for one caller and user: the name decoded to its tool and that one tool
 * looked up (`ToolBackend.findTool`), so a call costs one tool whatever the catalogue; the whole listing only
 * for a name that does not decode (a cut one), a backend that cannot look one tool up, and "did you mean".
 * Nothing is remembered across calls: the answer is the listing's as of this call, and the call itself is
 * still checked by execute and preview.
 */
import type { ToolListing } from "@toolpact/runtime";
import type { ToolBackend } from "./tool-backend.js";
import { createToolDirectory, toolRefOfName, type ToolDirectory } from "./tool-names.js";

/** Tools by MCP name, as one request sees them. */
export interface ToolLookup {
  /** The tool `name` stands for in the caller's listing, as `createToolDirectory(listing).resolve(name)` would answer. */
  find(name: string): Promise<ToolListing | undefined>;
  /** The caller's whole listing, read once per lookup (for "did you mean"). */
  directory(): Promise<ToolDirectory>;
}

/** The tools of `backend`, for the names of one request. */
export function createToolLookup(backend: ToolBackend): ToolLookup {
  let listed: Promise<ToolDirectory> | undefined;
  const directory = () => (listed ??= backend.listTools().then(createToolDirectory));
  return {
    directory,
    async find(name) {
      const ref = toolRefOfName(name);
      if (ref !== undefined && backend.findTool !== undefined) return backend.findTool(ref);
      return (await directory()).resolve(name);
    },
  };
}
