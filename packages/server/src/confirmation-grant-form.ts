/** The confirmation page's grant form, read into the runtime's `GrantChoice` (the runtime checks it against the policy). */
import { ToolpactError } from "@toolpact/contract";
import type { GrantChoice } from "@toolpact/runtime";

/** `maxCalls`, `minutes` and any number of `limitTo` fields of the page's grant form. */
export function grantChoiceOf(form: URLSearchParams): GrantChoice {
  const maxCalls = wholeNumber(form.get("maxCalls"), "maxCalls");
  const minutes = wholeNumber(form.get("minutes"), "minutes");
  const limitTo = form.getAll("limitTo");
  return {
    ...(maxCalls === undefined ? {} : { maxCalls }),
    ...(minutes === undefined ? {} : { seconds: minutes * 60 }),
    ...(limitTo.length === 0 ? {} : { limitTo }),
  };
}

function wholeNumber(value: string | null, field: string): number | undefined {
  if (value === null || value === "") return undefined;
  if (!/^[0-9]{1,9}$/.test(value)) {
    throw new ToolpactError("INPUT_INVALID", `${field} is a whole number: use the page's form`, {
      issues: [{ path: `/${field}`, message: "not a whole number" }],
    });
  }
  return Number(value);
}
