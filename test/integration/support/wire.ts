/** tRPC's HTTP wire format spoken with plain fetch, as a caller not written in TypeScript would. */

export interface WireResponse {
  readonly status: number;
  readonly body: { result?: { data: unknown }; error?: { message: string; code: number; data: Record<string, unknown> } };
}

/** A mutation: POST /trpc/<path> with the input as the JSON body. */
export async function mutate(url: string, path: string, input: unknown, headers: Record<string, string> = {}): Promise<WireResponse> {
  const response = await fetch(`${url}/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: (await response.json()) as WireResponse["body"] };
}

/** A mutation with a body given as text (for bodies JSON.stringify cannot build, such as very deep nesting). */
export async function mutateText(url: string, path: string, body: string, headers: Record<string, string> = {}): Promise<WireResponse> {
  const response = await fetch(`${url}/trpc/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: response.status, body: (await response.json()) as WireResponse["body"] };
}

/** A query: GET /trpc/<path>?input=<json>. */
export async function query(url: string, path: string, input: unknown, headers: Record<string, string> = {}): Promise<WireResponse> {
  const search = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const response = await fetch(`${url}/trpc/${path}${search}`, { headers });
  return { status: response.status, body: (await response.json()) as WireResponse["body"] };
}

/** The result of a successful call, or throws with the wire error. */
export function ok<T = unknown>(response: WireResponse): T {
  if (response.body.error || response.status !== 200) {
    throw new Error(`expected success, got HTTP ${response.status}: ${JSON.stringify(response.body.error)}`);
  }
  return response.body.result!.data as T;
}

/** Headers of a caller: its plugin key and actor token. */
export function callerHeaders(pluginKey: string | undefined, actorToken: string | undefined): Record<string, string> {
  return {
    ...(pluginKey === undefined ? {} : { authorization: `Bearer ${pluginKey}` }),
    ...(actorToken === undefined ? {} : { "x-toolpact-actor": actorToken }),
  };
}
