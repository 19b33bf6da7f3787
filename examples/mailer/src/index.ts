/**
 * The mailer plugin: an external-effect provider. Its manifest declares `recovery: "idempotent"`,
 * which is a promise this code keeps: the operation id is the idempotency key of every send, so a
 * re-invoked operation sends nothing twice.
 */
import type { ProviderDefinition } from "@toolpact/client";
import type { PluginSdk } from "@toolpact/runtime";
import { defineMailerProvider } from "./generated/index.js";
import { DEFAULT_OUTBOX_DB, openOutbox, type Outbox } from "./outbox.js";

export { openOutbox, DEFAULT_OUTBOX_DB, type Outbox, type OutgoingMessage, type QueuedMessage } from "./outbox.js";

/** How much of the body a preview shows. */
const PREVIEW_BODY_CHARACTERS = 160;

/** The host loads this: it opens the outbox (MAILER_OUTBOX_PATH, default .toolpact/mailer-outbox.db) and provides send-summary. */
export function activate(sdk: PluginSdk): void {
  sdk.tools.provideAll(mailerProvider(openOutbox(process.env.MAILER_OUTBOX_PATH ?? DEFAULT_OUTBOX_DB)));
}

/** The mailer's tools over an outbox. */
export function mailerProvider(outbox: Outbox): ProviderDefinition {
  return defineMailerProvider({
    sendSummary: {
      preview: (input) => ({
        summary: `Email "${input.subject}" to ${input.to}`,
        details: {
          to: input.to,
          subject: input.subject,
          body: input.body.length > PREVIEW_BODY_CHARACTERS ? `${input.body.slice(0, PREVIEW_BODY_CHARACTERS)}…` : input.body,
        },
      }),
      execute: (input, ctx) => {
        const sent = outbox.send({ tenantId: ctx.tenantId, userId: ctx.actor.userId, ...input }, ctx.operationId);
        return { messageId: sent.messageId, targetId: sent.messageId };
      },
    },
  });
}
