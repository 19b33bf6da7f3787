import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/** One email as the mailer hands it to its delivery service. */
export interface OutgoingMessage {
  readonly tenantId: string;
  readonly userId: string;
  readonly to: string;
  readonly subject: string;
  readonly body: string;
}

/** A message the outbox holds. */
export interface QueuedMessage extends OutgoingMessage {
  readonly messageId: string;
  readonly idempotencyKey: string;
  readonly queuedAt: string;
}

/**
 * The mailer's outbound channel. A real mailer would call an email API with an idempotency key;
 * this one writes to a local table, never the network, with the same contract: one send per key.
 */
export interface Outbox {
  /** Queues a message once per `idempotencyKey`; sending again with the same key returns the first message. */
  send(message: OutgoingMessage, idempotencyKey: string): QueuedMessage;
  /** Every queued message, oldest first. */
  list(): QueuedMessage[];
  close(): void;
}

/** Where the mailer keeps its outbox unless MAILER_OUTBOX_PATH says otherwise: beside the host's store. */
export const DEFAULT_OUTBOX_DB = "./.toolpact/mailer-outbox.db";

interface Row {
  message_id: string;
  idempotency_key: string;
  tenant_id: string;
  user_id: string;
  recipient: string;
  subject: string;
  body: string;
  queued_at: string;
}

/** Opens (and creates, if needed) the outbox database at `file`. Statements are prepared once. */
export function openOutbox(file: string, clock: () => number = Date.now): Outbox {
  if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`
    CREATE TABLE IF NOT EXISTS outbox (
      idempotency_key TEXT PRIMARY KEY,
      message_id TEXT NOT NULL UNIQUE,
      tenant_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      recipient TEXT NOT NULL,
      subject TEXT NOT NULL,
      body TEXT NOT NULL,
      queued_at TEXT NOT NULL
    );
  `);
  const insert = db.prepare(
    `INSERT INTO outbox (idempotency_key, message_id, tenant_id, user_id, recipient, subject, body, queued_at)
     VALUES (@idempotencyKey, @messageId, @tenantId, @userId, @to, @subject, @body, @queuedAt)
     ON CONFLICT (idempotency_key) DO NOTHING`,
  );
  const byKey = db.prepare<[string], Row>("SELECT * FROM outbox WHERE idempotency_key = ?");
  const all = db.prepare<[], Row>("SELECT * FROM outbox ORDER BY queued_at, rowid");

  return {
    send(message, idempotencyKey) {
      insert.run({ ...message, idempotencyKey, messageId: `msg_${randomUUID()}`, queuedAt: new Date(clock()).toISOString() });
      return toMessage(byKey.get(idempotencyKey)!);
    },
    list: () => all.all().map(toMessage),
    close() {
      db.close();
    },
  };
}

function toMessage(row: Row): QueuedMessage {
  return {
    messageId: row.message_id,
    idempotencyKey: row.idempotency_key,
    tenantId: row.tenant_id,
    userId: row.user_id,
    to: row.recipient,
    subject: row.subject,
    body: row.body,
    queuedAt: row.queued_at,
  };
}
