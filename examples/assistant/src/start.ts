/**
 * `pnpm start`: serves the runtime with the example plugins for interactive use, sets up the demo
 * tenant, and prints how to act as the assistant (curl) and as the user (the confirmation page).
 */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { DEMO_ISSUER, DEMO_TENANT, generateSecrets, setUpTenant, startServe } from "./demo-world.js";
import { createTextNarrator } from "./narrator.js";
import { START_DIR, START_SESSION_FILE, writeStartSession } from "./start-session.js";

const port = Number(process.env.PORT ?? 4400);
const relative = (file: string) => path.relative(process.cwd(), file) || file;

rmSync(START_DIR, { recursive: true, force: true });
mkdirSync(START_DIR, { recursive: true });
const secrets = generateSecrets();
const serve = await startServe({ dataDir: START_DIR, port, secrets }).catch((error: unknown) => {
  process.stderr.write(`pnpm start: ${(error as Error).message}\n(another server on port ${port}? set PORT=<n>)\n`);
  process.exit(1);
});
const say = createTextNarrator((line) => process.stdout.write(`${line}\n`));
const { pluginKey } = await setUpTenant(serve.url, secrets.adminKey, say);
writeStartSession({
  url: serve.url,
  tenantId: DEMO_TENANT,
  issuer: DEMO_ISSUER,
  actorSecret: Buffer.from(secrets.actorSecret).toString("base64"),
  adminKey: secrets.adminKey,
  assistantPluginKey: pluginKey,
});
const token = "pnpm --silent --filter @toolpact/example-assistant token";

process.stdout.write(`
toolpact is serving the example plugins at ${serve.url}  (tRPC at /trpc; GET /healthz, /readyz)
Data in ${relative(START_DIR)} (a fresh SQLite file on every start); throwaway secrets in ${relative(START_SESSION_FILE)}.

Act as the assistant for the user "ada" (in another terminal, from this folder):
  export TOOLPACT_URL=${serve.url}
  export PLUGIN_KEY=${pluginKey}
  export ACTOR_TOKEN=$(${token} --user ada)
  curl -s "$TOOLPACT_URL/trpc/tools.list" -H "authorization: Bearer $PLUGIN_KEY" -H "x-toolpact-actor: $ACTOR_TOKEN"
  curl -s -X POST "$TOOLPACT_URL/trpc/tools.preview" -H "content-type: application/json" \\
    -H "authorization: Bearer $PLUGIN_KEY" -H "x-toolpact-actor: $ACTOR_TOKEN" \\
    -d '{"ref":{"providerId":"com.example.mailer","tool":"send-summary"},"input":{"to":"ada@example.com","subject":"Hi","body":"Hello"}}'
  (docs/wire-format.md has every call; the preview above answers with a confirmUrl)

Act as the user "ada" on the confirmation page: open in a browser
  $TOOLPACT_URL/confirm/session?token=<presence token>&next=/confirm/<requestId>
  with a presence token from: ${token} --presence --user ada
  then approve or deny; the assistant's execute needs the token confirmations.wait hands out after approval.

Admin API: Authorization: Bearer <adminKey from ${relative(START_SESSION_FILE)}>.  Stop with Ctrl-C.
`);

const stop = () => {
  process.off("SIGINT", stop);
  process.off("SIGTERM", stop);
  void serve.stop().then((code) => {
    process.stdout.write(`toolpact serve stopped (exit code ${code})\n`);
    process.exitCode = code ?? 1;
  });
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
void serve.child.once("exit", (code) => {
  if (process.listenerCount("SIGINT") > 0) {
    process.stderr.write(`toolpact serve exited unexpectedly (code ${code}):\n${serve.output.slice(-20).join("\n")}\n`);
    process.exit(1);
  }
});
