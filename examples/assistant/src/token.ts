/**
 * `pnpm --silent --filter @toolpact/example-assistant token [--presence] [--user ada] [--level 1]`:
 * prints a token from the identity service of the running `pnpm start` session: an actor token issued
 * to the assistant (default), or a presence token for the confirmation page (`--presence`).
 */
import { parseArgs } from "node:util";
import { ASSISTANT_ID } from "./session.js";
import { mintActorToken, mintPresenceToken } from "./identity.js";
import { readStartSession } from "./start-session.js";

const HELP = `usage: token [--presence] [--user <id>] [--level <0..3>] [--ttl <seconds>]

Prints a token signed like the running \`pnpm start\` session's identity service signs:
  (default)    an actor token for the user, issued to ${ASSISTANT_ID}: send it as X-Toolpact-Actor
  --presence   a presence token for the user: open <url>/confirm/session?token=<it>&next=/confirm/<requestId>`;

try {
  const { values } = parseArgs({
    options: {
      presence: { type: "boolean" },
      user: { type: "string", default: "ada" },
      level: { type: "string", default: "1" },
      ttl: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
  } else {
    const session = readStartSession();
    const identity = { issuer: session.issuer, secret: new Uint8Array(Buffer.from(session.actorSecret, "base64")) };
    const person = { tenantId: session.tenantId, userId: values.user };
    const level = Number(values.level);
    if (!Number.isInteger(level) || level < 0 || level > 3) throw new Error(`--level is an integer from 0 to 3, got "${values.level}"`);
    const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
    const token = values.presence
      ? await mintPresenceToken(identity, person, ttl ?? 120)
      : await mintActorToken(identity, person, { level, issuedTo: ASSISTANT_ID, ...(ttl === undefined ? {} : { ttlSeconds: ttl }) });
    process.stdout.write(`${token}\n`);
  }
} catch (error) {
  process.stderr.write(`token: ${(error as Error).message}\n\n${HELP}\n`);
  process.exitCode = 2;
}
