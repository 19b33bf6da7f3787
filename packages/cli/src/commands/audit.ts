import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  type ActivityCheckpointRecord,
  type ActivityExportRecord,
  type AuditReport,
  type ChainedActivityRecord,
  CHAINED_FIELDS,
  HostError,
  checkpointActivity,
  exportActivity,
  listedChainSource,
  loadHostConfig,
  openAuditAccess,
  readAuditKey,
  storeChainSource,
  verifyActivityChain,
} from "@toolpact/server";
import { parseCommandArgs } from "../command-args.js";
import type { CliIo } from "../io.js";

const HELP = `usage: toolpact audit <verify|checkpoint|export|key> [options]

  verify [--config file] [--tenant id]          check the activity log against its signed checkpoints
  verify --file <export.jsonl> --public-key <k>  check an export offline, with the server's public key
  checkpoint [--config file] [--tenant id]      link settled activity and sign a checkpoint now
  export [--config file] [--since t] [--until t] [--tenant id] [--format jsonl|csv] [--out file]
                                                the log with its checkpoints, for an auditor
  key [--config file]                           print the public key checkpoints are signed with

The database is the config's "database" (or --database, or TOOLPACT_DATABASE_URL); the signing key is
derived from the storage key (TOOLPACT_STORAGE_KEY or "secrets.storageKey"). verify exits 0 when every
event up to each tenant's latest checkpoint is as it was checkpointed, and 1 naming the first event that
was changed, deleted, inserted or reordered. Times (--since, --until) are ISO 8601, or a duration ago
such as 7d, 12h or 30m. Without --out, export writes to standard output.`;

const OPTIONS = {
  config: { type: "string", short: "c" },
  database: { type: "string" },
  tenant: { type: "string" },
  file: { type: "string" },
  "public-key": { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  format: { type: "string" },
  out: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = { readonly [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean : string };

/** `toolpact audit`: 0 done (verify: intact), 1 failed (verify: a problem found), 2 usage. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "audit", help: HELP }, io, { args: [...args], options: OPTIONS, allowPositionals: true });
  if (typeof parsed === "number") return parsed;
  const [action, ...extra] = parsed.positionals;
  const usage = (message: string) => {
    io.stderr(`toolpact audit: ${message}\n\n${HELP}`);
    return 2;
  };
  if (extra.length > 0) return usage(`unexpected argument "${extra[0]}"`);
  const values = parsed.values as Values;
  try {
    switch (action) {
      case "verify":
        return await verify(values, io);
      case "checkpoint":
        return await checkpoint(values, io);
      case "export":
        return await exportLog(values, io);
      case "key": {
        io.stdout(readAuditKey(await config(values, io), io.env).publicKey);
        return 0;
      }
      case undefined:
        return usage("name what to do: verify, checkpoint, export or key");
      default:
        return usage(`unknown action "${action}": verify, checkpoint, export or key`);
    }
  } catch (error) {
    if (error instanceof HostError) {
      io.stderr(`toolpact audit: ${error.message}`);
      for (const detail of error.details) io.stderr(`  ${detail}`);
    } else if (error instanceof UsageError) {
      return usage(error.message);
    } else {
      io.stderr(`toolpact audit ${action}: failed unexpectedly: ${(error as Error)?.stack ?? String(error)}`);
    }
    return 1;
  }
}

class UsageError extends Error {}

function config(values: Values, io: CliIo) {
  return loadHostConfig({
    cwd: io.cwd,
    env: io.env,
    allowMissing: true,
    ...(values.config === undefined ? {} : { file: values.config }),
    ...(values.database === undefined ? {} : { database: values.database }),
  });
}

async function verify(values: Values, io: CliIo): Promise<number> {
  if (values.file !== undefined) {
    if (values["public-key"] === undefined) {
      throw new UsageError("--file needs --public-key: the key the server printed with `toolpact audit key` (never the one inside the file)");
    }
    const { events, checkpoints } = parseExport(await readFile(path.resolve(io.cwd, values.file), "utf8"), values.file);
    const source = listedChainSource(events, checkpoints);
    return printReport(await verifyActivityChain(source, values["public-key"]), `${values.file}`, io);
  }
  const host = await config(values, io);
  const publicKey = values["public-key"] ?? readAuditKey(host, io.env).publicKey;
  const access = await openAuditAccess(host);
  try {
    return printReport(await verifyActivityChain(storeChainSource(access.chain, values.tenant), publicKey), access.database, io);
  } finally {
    await access.close();
  }
}

function printReport(report: AuditReport, where: string, io: CliIo): number {
  for (const tenant of report.tenants) {
    if (tenant.problem !== undefined) continue;
    const latest = tenant.latest === undefined ? "no checkpoint yet" : `checkpoint ${tenant.latest.seq} of ${new Date(tenant.latest.createdAt).toISOString()}`;
    const start =
      tenant.startsAt === undefined ? "" : ` (from chain position ${tenant.startsAt}: older events are not here, past retention or outside the export)`;
    io.stdout(`tenant ${tenant.tenantId}: ${tenant.verified} events intact up to ${latest}${start}; ${tenant.pending} newer, not yet checkpointed`);
  }
  if (report.problem !== undefined) {
    const { tenantId, kind, eventId, message } = report.problem;
    io.stderr(`toolpact audit verify: ${where}: tenant ${tenantId}: ${kind}${eventId === undefined ? "" : ` at event ${eventId}`}: ${message}`);
    return 1;
  }
  io.stdout(`toolpact audit verify: ${where}: intact (${report.tenants.length} tenant${report.tenants.length === 1 ? "" : "s"})`);
  return 0;
}

async function checkpoint(values: Values, io: CliIo): Promise<number> {
  const host = await config(values, io);
  const key = readAuditKey(host, io.env);
  const access = await openAuditAccess(host);
  try {
    const run = await checkpointActivity(access.chain, key, {
      now: Date.now(),
      settleMs: access.settleMs,
      ...(values.tenant === undefined ? {} : { tenantId: values.tenant }),
    });
    const latest = new Map(run.checkpoints.map((made) => [made.tenantId, made]));
    for (const made of latest.values()) io.stdout(`tenant ${made.tenantId}: checkpoint ${made.seq} up to event ${made.lastId}`);
    io.stdout(
      `toolpact audit checkpoint: ${access.database}: linked ${run.linked} event${run.linked === 1 ? "" : "s"} ` +
        `older than ${access.settleMs / 1000} s in ${latest.size} tenant${latest.size === 1 ? "" : "s"}` +
        (run.contended > 0 ? `; ${run.contended} tenant(s) were being checkpointed by a server at the same time` : ""),
    );
    return 0;
  } finally {
    await access.close();
  }
}

/** The columns of a CSV export: the record type, every event field with its chain columns, then the checkpoint fields. */
const EVENT_FIELDS = [...CHAINED_FIELDS, "chainSeq", "chainHash"] as const;
const CHECKPOINT_FIELDS = ["seq", "lastId", "createdAt", "keyId", "signature"] as const;

async function exportLog(values: Values, io: CliIo): Promise<number> {
  const format = values.format ?? "jsonl";
  if (format !== "jsonl" && format !== "csv") throw new UsageError(`--format ${format}: use jsonl or csv`);
  const now = Date.now();
  const since = values.since === undefined ? undefined : parseTime(values.since, "--since", now);
  const until = values.until === undefined ? undefined : parseTime(values.until, "--until", now);
  const host = await config(values, io);
  const access = await openAuditAccess(host);
  const file = values.out === undefined ? undefined : createWriteStream(path.resolve(io.cwd, values.out));
  const write = file === undefined ? (line: string) => io.stdout(line) : (line: string) => void file.write(`${line}\n`);
  let events = 0;
  try {
    if (format === "csv") write(["type", ...EVENT_FIELDS, ...CHECKPOINT_FIELDS.map((field) => `checkpoint.${field}`)].join(","));
    const query = {
      ...(values.tenant === undefined ? {} : { tenantId: values.tenant }),
      ...(since === undefined ? {} : { since }),
      ...(until === undefined ? {} : { until }),
    };
    for await (const record of exportActivity(access.chain, query)) {
      if (record.type === "event") events++;
      write(format === "jsonl" ? asciiJson(record) : csvLine(record));
    }
  } finally {
    await access.close();
    if (file !== undefined) await new Promise((resolve) => file.end(resolve));
  }
  if (file !== undefined) io.stdout(`toolpact audit export: ${events} event${events === 1 ? "" : "s"} with their checkpoints written to ${values.out}`);
  return 0;
}

/** JSON with every character outside printable ASCII escaped: it passes any terminal unchanged and parses to the same value. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[^\u0020-\u007e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function csvLine(record: ActivityExportRecord): string {
  const cells =
    record.type === "event"
      ? ["event", ...EVENT_FIELDS.map((field) => record.event[field]), ...CHECKPOINT_FIELDS.map(() => undefined)]
      : [
          "checkpoint",
          ...EVENT_FIELDS.map((field) => (field === "tenantId" ? record.checkpoint.tenantId : field === "chainHash" ? record.checkpoint.chainHash : undefined)),
          ...CHECKPOINT_FIELDS.map((field) => record.checkpoint[field]),
        ];
  return cells.map(csvCell).join(",");
}

function csvCell(value: unknown): string {
  if (value === undefined || value === null) return "";
  const text = String(value);
  // A cell a spreadsheet would run as a formula is kept as text.
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value !== "number" ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** An ISO 8601 time, or a duration ago (`7d`, `12h`, `30m`, `45s`), as Unix ms. */
function parseTime(text: string, option: string, now: number): number {
  const ago = /^(\d+)([dhms])$/.exec(text);
  if (ago !== null) return now - Number(ago[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[ago[2] as "d" | "h" | "m" | "s"];
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw new UsageError(`${option} "${text}" is neither an ISO 8601 time (2026-12-01T00:00:00Z) nor a duration ago (7d, 12h, 30m)`);
  return at;
}

/** The events and checkpoints of a JSONL export; a line that is neither fails naming its line number. */
function parseExport(text: string, file: string): { events: ChainedActivityRecord[]; checkpoints: ActivityCheckpointRecord[] } {
  const events: ChainedActivityRecord[] = [];
  const checkpoints: ActivityCheckpointRecord[] = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (line === "") continue;
    let record: Partial<{ type: string; event: ChainedActivityRecord; checkpoint: ActivityCheckpointRecord }>;
    try {
      record = JSON.parse(line) as typeof record;
    } catch (error) {
      throw new HostError(`${file}:${index + 1}: not JSON (${(error as Error).message}): give the file \`toolpact audit export --format jsonl\` wrote`);
    }
    if (record.type === "event" && typeof record.event === "object" && record.event !== null) events.push(record.event);
    else if (record.type === "checkpoint" && typeof record.checkpoint === "object" && record.checkpoint !== null) checkpoints.push(record.checkpoint);
    else throw new HostError(`${file}:${index + 1}: neither an event nor a checkpoint record of \`toolpact audit export --format jsonl\``);
  }
  return { events, checkpoints };
}
