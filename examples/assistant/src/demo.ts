/**
 * `pnpm demo`: the whole story in the terminal, against a real `toolpact serve` on a fresh SQLite file.
 * It is a check too: it exits 1 when any step does not behave as expected.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openOutbox } from "@toolpact/example-mailer";
import { decideOnConfirmationPage } from "./confirmation-page-visit.js";
import { DEMO_TENANT, demoIdentity, freePort, generateSecrets, setUpTenant, startServe, type ServeProcess } from "./demo-world.js";
import { mintActorToken, mintPresenceToken } from "./identity.js";
import { runAgentOverMcp } from "./mcp-session.js";
import { createTextNarrator, type Narrator } from "./narrator.js";
import { ASSISTANT_ID, SessionCheckError, runAssistantSession } from "./session.js";

const USER = { id: "ada", email: "ada@example.com" };

async function main(): Promise<number> {
  const say = createTextNarrator((line) => process.stdout.write(`${line}\n`));
  const dataDir = mkdtempSync(path.join(tmpdir(), "toolpact-demo-"));
  let serve: ServeProcess | undefined;
  /** Stops the server and deletes the run's files; resolves with the server's exit code. */
  const cleanUp = async (): Promise<number | null | undefined> => {
    const code = await serve?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  process.once("SIGINT", () => {
    process.stdout.write("\ndemo: interrupted; stopping the server\n");
    void cleanUp().then(() => process.exit(130));
  });
  let failed = false;
  try {
    process.stdout.write(
      "toolpact demo: an assistant plugin works on a user's notes and email through typed tool calls.\n" +
        "Every step is previewed, confirmed by whoever the tenant's policy says, executed once, and logged.\n",
    );

    say.heading("Setting up  (the demo plays the platform: operator, tenant admin and identity service)");
    const secrets = generateSecrets();
    say.say("secrets", "generated throwaway ones (admin key, actor secret, signing key, storage key); passed to the server in its environment only");
    serve = await startServe({ dataDir, port: await freePort(), secrets });
    say.say("started", `toolpact serve at ${serve.url}, on a fresh SQLite file ${path.join(dataDir, "toolpact.db")}`);
    const { pluginKey } = await setUpTenant(serve.url, secrets.adminKey, say);
    const identity = demoIdentity(secrets);
    const person = { tenantId: DEMO_TENANT, userId: USER.id };
    const actorToken = await mintActorToken(identity, person, { level: 1, issuedTo: ASSISTANT_ID });
    say.say("signed in", `${USER.id}: the identity service issued an actor token for the assistant (verification level 1)`);

    const userApproves = async (confirmUrl: string, narrator: Narrator) => {
      narrator.line(`[the demo now plays ${USER.id} at her browser]`);
      const presenceToken = await mintPresenceToken(identity, person);
      narrator.say("identity", `the identity service sends ${USER.id}'s browser to the page with a 2-minute presence token`);
      const visit = await decideOnConfirmationPage({
        confirmUrl,
        presenceToken,
        decision: "approve",
        onStep: (text) => narrator.say(USER.id, text),
      });
      if (visit.status !== "approved") throw new SessionCheckError(`the page should show the request approved; it shows "${visit.status}"`);
      narrator.say("page", `now says the request is ${visit.status}`);
    };
    const result = await runAssistantSession({ url: serve.url, pluginKey, actorToken, user: USER, narrator: say, userApproves });
    const agent = await runAgentOverMcp({ url: serve.url, pluginKey, actorToken, user: USER, narrator: say, userApproves });

    say.heading("What ran");
    say.say("notes", `note ${result.noteId} in the notes plugin's own table (operation ${result.noteOperationId})`);
    const outbox = openOutbox(path.join(dataDir, "mailer-outbox.db"));
    const queued = outbox.list();
    outbox.close();
    const sent = [
      { messageId: result.messageId, operationId: result.mailOperationId },
      { messageId: agent.messageId, operationId: agent.operationId },
    ];
    const keyed = sent.every(({ messageId, operationId }) =>
      queued.some((message) => message.messageId === messageId && message.idempotencyKey === operationId),
    );
    if (queued.length !== sent.length || !keyed) {
      throw new SessionCheckError(
        `the mailer's outbox should hold exactly the two approved messages, each keyed by its operation id; it holds ${queued.length}`,
      );
    }
    say.say("mailer", `outbox: 2 messages to ${queued[0]!.to} (the assistant's and the agent's), each with its operation id as idempotency key`);
    say.say("refused", "the replayed token (CONFIRMATION_USED) and the changed input (CONFIRMATION_MISMATCH): nothing ran");
  } catch (error) {
    failed = true;
    process.stdout.write(`\ndemo FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
    if (!(error instanceof SessionCheckError) && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    if (serve) process.stderr.write(`\ntoolpact serve output:\n${serve.output.join("\n")}\n`);
  }
  const shutdown = await cleanUp();
  if (serve && shutdown !== 0) {
    process.stdout.write(`\ndemo FAILED: toolpact serve should stop cleanly on SIGTERM; it exited with code ${shutdown}\n`);
    return 1;
  }
  if (failed) return 1;
  process.stdout.write(`\ndemo: every step behaved as expected; toolpact serve drained and stopped on SIGTERM\n`);
  return 0;
}

process.exitCode = await main();
