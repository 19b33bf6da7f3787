/**
 * The few procedures the generated clients do not cover (`tools.list`, `activity.list`, the admin API),
 * spoken over tRPC's plain HTTP wire format: queries are GET with `?input=`, mutations POST a JSON body.
 */
import { ToolpactError, isToolpactErrorCode } from "@toolpact/client";

/** Request headers: a caller's `authorization` and `x-toolpact-actor`, or the admin's `authorization`. */
export type WireHeaders = Readonly<Record<string, string>>;

interface WireBody {
  readonly result?: { readonly data?: unknown };
  readonly error?: { readonly message?: string; readonly data?: { readonly toolpactCode?: unknown; readonly toolpactData?: unknown } };
}

/** A tRPC query: `GET <url>/trpc/<path>?input=<json>`. */
export function trpcQuery<T>(url: string, path: string, input: unknown, headers: WireHeaders): Promise<T> {
  const search = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return send<T>(`${url}/trpc/${path}${search}`, { method: "GET", headers: { ...headers } }, path);
}

/** A tRPC mutation: `POST <url>/trpc/<path>` with the input as the JSON body. */
export function trpcMutation<T>(url: string, path: string, input: unknown, headers: WireHeaders): Promise<T> {
  return send<T>(
    `${url}/trpc/${path}`,
    { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(input ?? null) },
    path,
  );
}

/** The admin credential's headers. */
export function adminHeaders(adminKey: string): WireHeaders {
  return { authorization: `Bearer ${adminKey}` };
}

/** A caller's headers: its plugin key and the actor token of the user it acts for. */
export function callerHeaders(pluginKey: string, actorToken: string): WireHeaders {
  return { authorization: `Bearer ${pluginKey}`, "x-toolpact-actor": actorToken };
}

async function send<T>(target: string, init: RequestInit, path: string): Promise<T> {
  const response = await fetch(target, init);
  const text = await response.text();
  let body: WireBody;
  try {
    body = JSON.parse(text) as WireBody;
  } catch {
    throw new Error(`${path}: HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (body.error !== undefined) {
    const code = body.error.data?.toolpactCode;
    const message = body.error.message ?? `${path} failed with HTTP ${response.status}`;
    if (isToolpactErrorCode(code)) throw new ToolpactError(code, message);
    throw new Error(`${path}: HTTP ${response.status}: ${message}`);
  }
  return body.result?.data as T;
}
