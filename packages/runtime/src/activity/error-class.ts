import type { ToolpactErrorCode } from "@toolpact/contract";
import type { ActivityOutcome } from "../api.js";

const CLASS_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/** How a refused or failed call shows in the activity log. */
export function outcomeOf(code: ToolpactErrorCode): ActivityOutcome {
  switch (code) {
    case "PROVIDER_FAILED":
    case "HANDLER_INVALID":
    case "STORE_UNAVAILABLE":
    case "SHUTTING_DOWN":
    case "CONCURRENT_CHANGE":
    case "STORED_DATA_DAMAGED":
      return "failed";
    case "OUTCOME_UNKNOWN":
      return "unknown";
    default:
      return "denied";
  }
}

/**
 * The class name of something a provider threw: an identifier of at most 64 characters, else "Error".
 * Never the message, never a thrown string's content.
 */
export function errorClassOf(error: unknown): string {
  if (error === null || error === undefined) return "Null";
  if (typeof error !== "object" && typeof error !== "function") return typeof error;
  let name: unknown;
  try {
    // A getter or proxy on what a provider threw must not throw again from here.
    name = (error as { constructor?: { name?: unknown } }).constructor?.name;
  } catch {
    return "Error";
  }
  return typeof name === "string" && CLASS_NAME.test(name) ? name : "Error";
}
