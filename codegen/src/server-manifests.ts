import { codegenError } from "./codegen-error.js";

/** Where and as whom `fetchServerManifests` asks. */
export interface ServerManifestsOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:4400`; the procedure is `<url>/trpc/tools.manifests`. */
  readonly url: string;
  /** The calling plugin's key (`Authorization: Bearer <key>`). */
  readonly pluginKey: string;
  /** An actor token for that plugin's tenant (`X-Toolpact-Actor`): policy is decided per actor. */
  readonly actorToken: string;
}

/** One manifest as the server sent it, to be validated like a file. */
export interface ServerManifest {
  /** `<url>#<plugin id>`: how diagnostics name it. */
  readonly source: string;
  /** Its JSON text. */
  readonly text: string;
}

/**
 * The manifests of the providers a running server lets this caller call, narrowed to those tools
 * (the server's `tools.manifests`). Nothing is trusted: the caller validates each like a file.
 * Throws ToolpactError MANIFEST_INVALID saying what went wrong: unreachable, refused, or not a toolpact server.
 */
export async function fetchServerManifests(options: ServerManifestsOptions): Promise<ServerManifest[]> {
  const base = options.url.replace(/\/+$/, "");
  const endpoint = `${base}/trpc/tools.manifests`;
  let response: Response;
  try {
    response = await fetch(endpoint, {
      headers: { authorization: `Bearer ${options.pluginKey}`, "x-toolpact-actor": options.actorToken, accept: "application/json" },
      redirect: "error",
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    throw codegenError(`cannot reach ${base} (${cause}): is toolpact serve running there?`, error);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    throw codegenError(`${endpoint} answered ${response.status} without JSON: is ${base} a toolpact server?`, error);
  }
  if (!response.ok) {
    const error = (body as { error?: { message?: unknown; data?: { toolpactCode?: unknown } } }).error;
    const code = typeof error?.data?.toolpactCode === "string" ? error.data.toolpactCode : `HTTP ${response.status}`;
    const message = typeof error?.message === "string" ? error.message : "no message";
    throw codegenError(`${base} refused tools.manifests: ${code}: ${message}`);
  }
  const manifests = (body as { result?: { data?: unknown } }).result?.data;
  if (!Array.isArray(manifests)) throw codegenError(`${endpoint} answered without a list of manifests: is ${base} a toolpact server?`);
  return manifests.map((manifest: unknown, index) => {
    const id = typeof (manifest as { id?: unknown } | null)?.id === "string" ? (manifest as { id: string }).id : `manifest ${index + 1}`;
    return { source: `${base}#${id}`, text: JSON.stringify(manifest, null, 2) };
  });
}
