/**
 * The assistant's scripted session: what an assistant plugin does for one user, through the clients
 * generated from the notes and mailer manifests, with every step told and checked.
 */
import { createHttpTransport, isToolpactError, type PreviewResult, type ToolpactError, type ToolpactErrorCode } from "@toolpact/client";
import type { ActivityEvent, ActivityPage, ToolListing } from "@toolpact/runtime";
import { createToolClients } from "./generated/index.js";
import type { Narrator } from "./narrator.js";
import { callerHeaders, trpcQuery } from "./wire.js";

/** The assistant's plugin id. */
export const ASSISTANT_ID = "com.example.assistant";
/** The tools the session expects `tools.list` to offer the assistant. */
export const EXPECTED_TOOLS = [
  "com.example.mailer:send-summary@1",
  "com.example.notes:archive-record@1",
  "com.example.notes:create-record@1",
  "com.example.notes:search-records@1",
] as const;

/** What the session needs. */
export interface AssistantSessionOptions {
  /** The toolpact server's base URL. */
  readonly url: string;
  /** The assistant's plugin key for the tenant. */
  readonly pluginKey: string;
  /** The user's actor token, issued to the assistant. */
  readonly actorToken: string;
  /** The user the assistant acts for. */
  readonly user: { readonly id: string; readonly email: string };
  /** Plays the user at toolpact's confirmation page: approve the request at `confirmUrl`. */
  readonly userApproves: (confirmUrl: string, narrator: Narrator) => Promise<void>;
  readonly narrator: Narrator;
}

/** What the session did. */
export interface AssistantSessionResult {
  readonly noteId: string;
  readonly noteOperationId: string;
  readonly messageId: string;
  readonly mailOperationId: string;
  /** The user's activity, oldest first. */
  readonly activity: readonly ActivityEvent[];
}

/** A step did not behave as the session expects; the message says what was expected and what happened. */
export class SessionCheckError extends Error {
  override readonly name = "SessionCheckError";
}

/** Runs the session; throws SessionCheckError at the first step that does not behave as expected. */
export async function runAssistantSession(options: AssistantSessionOptions): Promise<AssistantSessionResult> {
  const { narrator: say, user } = options;
  const headers = callerHeaders(options.pluginKey, options.actorToken);
  const tools = createToolClients(createHttpTransport({ url: options.url, pluginKey: options.pluginKey, actorToken: options.actorToken }));

  // 1. Discover.
  say.heading(`1. Discover: which tools may the assistant call for ${user.id}?  (tools.list)`);
  const listed = await trpcQuery<ToolListing[]>(options.url, "tools.list", undefined, headers);
  say.table(
    ["tool", "effect", "confirmation", "min. level", "title"],
    listed.map((tool) => [
      tool.fullName,
      tool.effect,
      tool.requiresConfirmation ? "required" : "optional",
      String(tool.minVerificationLevel),
      tool.title ?? "",
    ]),
  );
  check(
    sameList(
      listed.map((tool) => tool.fullName),
      EXPECTED_TOOLS,
    ),
    `tools.list should offer exactly ${EXPECTED_TOOLS.join(", ")}; it offered ${listed.map((tool) => tool.fullName).join(", ") || "nothing"}`,
  );

  // 2. Search (read: runs without confirmation).
  say.heading(`2. Search ${user.id}'s notes for "Q3"  (search-records: read, no confirmation)`);
  const before = await tools.notes.searchRecords.execute({ query: "Q3" });
  say.say("ran", `operation ${before.operationId}: ${count(before.result.records.length, "note")} found`);
  check(before.result.records.length === 0, `a fresh database should hold no notes; search found ${before.result.records.length}`);

  // 3. Create a note: token mode.
  const note = { title: "Q3 plan", body: "Hire two engineers; ship the importer by September.", tags: ["planning"] };
  say.heading("3. Create a note  (create-record: write, token mode)");
  const notePreview = await tools.notes.createRecord.preview(note);
  showPreview(say, notePreview);
  expectMode(notePreview, "token", "create-record");
  say.say(
    "who confirms",
    `the assistant, as ${user.id}'s confirmation UI: the tenant's policy names it a trusted confirmation UI,\n` +
      `so preview handed it a token at once; it shows ${user.id} the preview and she says yes in its window`,
  );
  const noteToken = await tools.notes.createRecord.confirm(notePreview);
  const created = await tools.notes.createRecord.execute(note, { confirmationToken: noteToken });
  say.say("ran", `operation ${created.operationId}: note ${created.result.id}`);
  const after = await tools.notes.searchRecords.execute({ query: "Q3" });
  say.say("search again", `"Q3" now finds ${after.result.records.map((record) => `"${record.title}" (${record.id})`).join(", ")}`);
  check(
    after.result.records.length === 1 && after.result.records[0]?.id === created.result.id,
    `after create, search should find exactly note ${created.result.id}; it found ${JSON.stringify(after.result.records)}`,
  );

  // 4. Send a summary: platform mode, the user approves on toolpact's page.
  const mail = {
    to: user.email,
    subject: `Summary: ${note.title}`,
    body: `You created "${note.title}": ${note.body}`,
  };
  say.heading("4. Email a summary  (send-summary: external, platform mode)");
  const mailPreview = await tools.mailer.sendSummary.preview(mail);
  showPreview(say, mailPreview);
  if (!mailPreview.confirmation.required || mailPreview.confirmation.mode !== "platform") {
    throw new SessionCheckError(`send-summary should need platform-mode confirmation; preview said ${JSON.stringify(mailPreview.confirmation)}`);
  }
  const { confirmUrl, requestId } = mailPreview.confirmation;
  say.say(
    "who confirms",
    `${user.id} herself, on toolpact's confirmation page. The assistant got no token, only request\n` +
      `${requestId} and its page, which it shows ${user.id}; it waits for her decision (confirmations.wait):\n` +
      confirmUrl,
  );
  const waiting = new AbortController();
  const mailToken = tools.mailer.sendSummary.confirm(mailPreview, { signal: waiting.signal });
  mailToken.catch(() => {});
  try {
    await options.userApproves(confirmUrl, say);
  } catch (error) {
    waiting.abort(error);
    throw error;
  }
  const sent = await tools.mailer.sendSummary.execute(mail, { confirmationToken: await mailToken });
  say.say("ran", `the wait returned the token; operation ${sent.operationId}: message ${sent.result.messageId} is in the mailer's outbox`);

  // 5. Replay: a token is single-use.
  say.heading("5. Replay the note's confirmation token  (single use)");
  const replay = await refused("CONFIRMATION_USED", tools.notes.createRecord.execute(note, { confirmationToken: noteToken }));
  say.say("refused", `${replay.code}: ${replay.message}`);
  check(
    replay.data.operationId === created.operationId,
    `CONFIRMATION_USED should name the operation that used the token (${created.operationId}); it named ${replay.data.operationId ?? "none"}`,
  );
  say.say("and", `toolpact tells the assistant (the token's own caller) which operation used it: ${replay.data.operationId}`);

  // 6. Tamper: the token is bound to the previewed input.
  const approved = { title: "Budget review", tags: ["finance"] };
  const edited = { title: "Budget review (cancelled)", tags: ["finance"] };
  say.heading("6. Change the input after preview  (the token is bound to the input)");
  const budgetPreview = await tools.notes.createRecord.preview(approved);
  say.say("previewed", budgetPreview.summary);
  const budgetToken = await tools.notes.createRecord.confirm(budgetPreview);
  say.say("executed", `with the title "${edited.title}" instead, and the token of the preview`);
  const tampered = await refused("CONFIRMATION_MISMATCH", tools.notes.createRecord.execute(edited, { confirmationToken: budgetToken }));
  say.say("refused", `${tampered.code}: ${tampered.message}`);
  const unchanged = await tools.notes.searchRecords.execute({ query: "Budget" });
  check(unchanged.result.records.length === 0, `the refused call should have created nothing; search found ${unchanged.result.records.length} notes`);
  say.say("nothing ran", `search "Budget" finds no note`);

  // 7. The activity log.
  say.heading(`7. The activity log: ${user.id}'s events, oldest first  (activity.list)`);
  const page = await trpcQuery<ActivityPage>(options.url, "activity.list", { limit: 100 }, headers);
  const activity = [...page.events].reverse();
  say.table(
    ["time", "kind", "tool", "phase", "outcome", "error", "target"],
    activity.map((event) => [
      event.at.slice(11, 23),
      event.kind,
      event.tool === undefined ? "" : shortTool(event.tool),
      event.phase,
      event.outcome,
      event.errorCode ?? "",
      event.targetId ?? "",
    ]),
  );
  const executed = (tool: string, targetId: string) =>
    activity.some((event) => event.tool === tool && event.phase === "execute" && event.outcome === "succeeded" && event.targetId === targetId);
  check(executed("com.example.notes:create-record@1", created.result.id), "the activity log should record the note's creation with its id as target");
  check(executed("com.example.mailer:send-summary@1", sent.result.messageId), "the activity log should record the send with the message id as target");
  for (const code of ["CONFIRMATION_USED", "CONFIRMATION_MISMATCH"]) {
    check(
      activity.some((event) => event.errorCode === code),
      `the activity log should record the refused call (${code})`,
    );
  }
  check(
    activity.every((event) => !JSON.stringify(event).includes(note.body)),
    "the activity log must not contain raw input (the note's body appeared in it)",
  );
  say.line("no inputs or outputs in it: only who, what, when, how it ended, and the target the provider named");

  return {
    noteId: created.result.id,
    noteOperationId: created.operationId,
    messageId: sent.result.messageId,
    mailOperationId: sent.operationId,
    activity,
  };
}

function showPreview(say: Narrator, preview: PreviewResult): void {
  say.say("preview", preview.summary);
  if (preview.details !== undefined) say.say("details", JSON.stringify(preview.details));
}

function expectMode(preview: PreviewResult, mode: "token" | "platform", tool: string): void {
  const actual = preview.confirmation.required ? preview.confirmation.mode : "none";
  check(actual === mode, `${tool} should need ${mode}-mode confirmation; preview said ${actual}`);
}

/** Awaits a call that must be refused with `code`; anything else is a failed check. */
async function refused(code: ToolpactErrorCode, call: Promise<unknown>): Promise<ToolpactError> {
  try {
    await call;
  } catch (error) {
    if (isToolpactError(error) && error.code === code) return error;
    throw new SessionCheckError(`expected ${code}; got ${isToolpactError(error) ? `${error.code}: ${error.message}` : String(error)}`);
  }
  throw new SessionCheckError(`expected ${code}; the call succeeded`);
}

function check(condition: boolean, failure: string): asserts condition {
  if (!condition) throw new SessionCheckError(failure);
}

function sameList(actual: readonly string[], expected: readonly string[]): boolean {
  const sorted = [...actual].sort();
  return sorted.length === expected.length && sorted.every((name, index) => name === expected[index]);
}

function shortTool(fullName: string): string {
  return fullName.replace(/^com\.example\./, "");
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
