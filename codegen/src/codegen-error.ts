import { ToolpactError } from "@toolpact/contract";

/** A manifest set codegen cannot turn into code (a name collision, a schema it cannot compile). */
export function codegenError(message: string, cause?: unknown): ToolpactError {
  return new ToolpactError("MANIFEST_INVALID", message, {}, cause === undefined ? undefined : { cause });
}
