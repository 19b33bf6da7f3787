// The experiment behind the durable targets this machine misses (docs/benchmarks.md, "What the commit
// costs"): the same calls with their SQLite file on the disk and on a memory file system (/dev/shm, tmpfs),
// so a commit's WAL writes cost a memory copy instead of a write to the VM's disk. Everything else is the
// same code on the same data: if a call meets its target on tmpfs and not on the disk, the commit's I/O on
// this machine is what stands between them. tmpfs is not durable across a reboot; it is the experiment,
// not a configuration to run.
//
// In one process, interleaved round by round: toolpact's `runtime.execute` of the read tool (also with group
// commit off, each write committed alone at once instead of after a setImmediate with its turn's others), the confirmed
// write under a grant, and the write that needs no confirmation; beside them a bare tRPC `createCaller`
// that inserts a row per call (the bench's durable baseline), and one bare commit of two rows (what a
// read's transaction writes, without the pipeline).
//
//   node bench/durable/commit-floor.mjs [--calls 3000] [--rounds 5]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { initTRPC } from "@trpc/server";
import Database from "better-sqlite3";
import { z } from "zod";
import { SCRATCH_ENV } from "../lib/scratch.mjs";
import { formatMs, formatRatio, markdownTable, median } from "../lib/stats.mjs";
import { GRANTING_POLICY, READ_REF, TENANT_ID, UNCONFIRMED_WRITE_REF, WRITE_REF } from "../lib/tenant.mjs";
import { checkItem, inputOf, lookupItem } from "../lib/work.mjs";
import { createWorld } from "../lib/world.mjs";

const { values } = parseArgs({ options: { calls: { type: "string", default: "3000" }, rounds: { type: "string", default: "5" } } });
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const WARM_UP = 1000;
const PLACES = { disk: tmpdir(), tmpfs: "/dev/shm" };

/** A fresh directory in `place`: the stores of every system below live in it. */
async function at(place, action) {
  const dir = await mkdtemp(path.join(PLACES[place], "toolpact-commit-floor-"));
  const previous = process.env[SCRATCH_ENV];
  process.env[SCRATCH_ENV] = dir;
  try {
    return await action(dir);
  } finally {
    if (previous === undefined) delete process.env[SCRATCH_ENV];
    else process.env[SCRATCH_ENV] = previous;
  }
}

/** A SQLite file opened as toolpact opens its ledger (WAL, synchronous=NORMAL). */
function ledgerFile(dir, name, schema) {
  const db = new Database(path.join(dir, name));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(schema);
  return db;
}

const principalOf = (world) => world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });

async function approveGrant(runtime, principal) {
  const { confirmation } = await runtime.preview(principal, WRITE_REF, inputOf(0));
  const decided = await runtime.decideConfirmation({ tenantId: TENANT_ID, userId: principal.actor.userId }, confirmation.requestId, "approve", {
    seconds: 86_400,
  });
  if (typeof decided.grantId !== "string") throw new Error("the approval made no grant");
}

const SYSTEMS = {
  "toolpact read (runtime.execute)": async () => {
    const world = await createWorld();
    const principal = await principalOf(world);
    return { call: async (i) => checkItem((await world.runtime.execute(principal, READ_REF, inputOf(i))).result, inputOf(i).id, "read"), close: world.close };
  },
  // The same read with each write committed alone, at once, rather than with the others of its event-loop
  // turn after a setImmediate: what group commit costs one sequential caller.
  "toolpact read, group commit off": async () => {
    const world = await createWorld({ sqliteOptions: { groupCommit: false } });
    const principal = await principalOf(world);
    return { call: async (i) => checkItem((await world.runtime.execute(principal, READ_REF, inputOf(i))).result, inputOf(i).id, "read"), close: world.close };
  },
  "toolpact confirmed write under a grant": async () => {
    const world = await createWorld({ policy: GRANTING_POLICY });
    const principal = await principalOf(world);
    await approveGrant(world.runtime, principal);
    return { call: async (i) => checkItem((await world.runtime.execute(principal, WRITE_REF, inputOf(i))).result, inputOf(i).id, "grant"), close: world.close };
  },
  "toolpact write needing no confirmation": async () => {
    const world = await createWorld({ policy: GRANTING_POLICY });
    const principal = await principalOf(world);
    return {
      call: async (i) => checkItem((await world.runtime.execute(principal, UNCONFIRMED_WRITE_REF, inputOf(i))).result, inputOf(i).id, "write"),
      close: world.close,
    };
  },
  "bare tRPC createCaller, a row per call": async (dir) => {
    const db = ledgerFile(dir, "calls.db", "CREATE TABLE calls (id INTEGER PRIMARY KEY, item TEXT NOT NULL, at INTEGER NOT NULL)");
    const insert = db.prepare("INSERT INTO calls (item, at) VALUES (?, ?)");
    const t = initTRPC.create();
    const router = t.router({
      get: t.procedure.input(z.strictObject({ id: z.string().min(1).max(64) })).mutation(({ input }) => {
        insert.run(input.id, Date.now());
        return lookupItem(input.id);
      }),
    });
    const caller = t.createCallerFactory(router)({});
    return { call: async (i) => checkItem(await caller.get(inputOf(i)), inputOf(i).id, "trpc"), close: async () => db.close() };
  },
  "one commit of two rows (no pipeline)": async (dir) => {
    const db = ledgerFile(
      dir,
      "rows.db",
      "CREATE TABLE a (tenant TEXT, id TEXT, body TEXT, PRIMARY KEY (tenant, id)) WITHOUT ROWID; CREATE TABLE b (tenant TEXT, id TEXT, body TEXT, PRIMARY KEY (tenant, id)) WITHOUT ROWID;",
    );
    const [a, b] = [db.prepare("INSERT INTO a VALUES (?, ?, ?)"), db.prepare("INSERT INTO b VALUES (?, ?, ?)")];
    const body = "x".repeat(300);
    const commit = db.transaction((id) => {
      a.run("t", id, body);
      b.run("t", id, body);
    });
    let n = 0;
    return { call: async () => commit(String(n++).padStart(12, "0")), close: async () => db.close() };
  },
};

/** Sequential latencies of `CALLS` calls, ms. */
async function sequential(system, from) {
  const samples = new Float64Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now();
    await system.call(from + i);
    samples[i] = performance.now() - start;
  }
  return samples;
}

const names = Object.keys(SYSTEMS);
const live = new Map();
const samples = new Map();
const dirs = [];
for (const name of names) {
  for (const place of Object.keys(PLACES)) {
    const system = await at(place, async (dir) => {
      dirs.push(dir);
      return SYSTEMS[name](dir);
    });
    for (let i = 0; i < WARM_UP; i++) await system.call(i);
    live.set(`${name}|${place}`, system);
    samples.set(`${name}|${place}`, []);
  }
}
const keys = [...live.keys()];
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < keys.length; k++) {
    const key = keys[(k + round) % keys.length];
    samples.get(key).push(median([...(await sequential(live.get(key), round * CALLS))]));
  }
}
for (const system of live.values()) await system.close();
await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));

const p50 = (key) => median(samples.get(key));
const rows = names.map((name) => {
  const [disk, tmpfs] = [p50(`${name}|disk`), p50(`${name}|tmpfs`)];
  return [
    name,
    formatMs(disk),
    `${Math.round(1000 / disk).toLocaleString("en-US")}`,
    formatMs(tmpfs),
    `${Math.round(1000 / tmpfs).toLocaleString("en-US")}`,
    formatRatio(disk / tmpfs),
  ];
});
console.log(`# Commit floor: the same calls with the SQLite file on the disk (${PLACES.disk}) and on tmpfs (/dev/shm)\n`);
console.log(
  `${ROUNDS} interleaved rounds of ${CALLS} sequential calls per system and place, after ${WARM_UP} warm-up calls; p50 = median of the rounds' medians.\n`,
);
console.log(markdownTable(["system (in process, sequential)", "disk p50 ms", "disk calls/s", "tmpfs p50 ms", "tmpfs calls/s", "disk ÷ tmpfs"], rows));
const ratio = (a, b, place) => formatRatio(p50(`${a}|${place}`) / p50(`${b}|${place}`));
console.log("\n| ratio | disk | tmpfs |\n| --- | ---: | ---: |");
for (const [label, a, b] of [
  ["read ÷ bare tRPC with a row per call", names[0], names[4]],
  ["read with group commit off ÷ read", names[1], names[0]],
  ["granted write ÷ read", names[2], names[0]],
  ["granted write ÷ write needing no confirmation", names[2], names[3]],
]) {
  console.log(`| ${label} | ${ratio(a, b, "disk")} | ${ratio(a, b, "tmpfs")} |`);
}
