// One sequential caller in process, on a SQLite ledger: the plain read, a write that needs no confirmation,
// and the confirmed write under a grant its actor approved (the grant rows of the overhead group), each on
// a store of its own, in interleaved rounds; prints µs per call and each one's ratio to the read.
// To see where a granted call's time goes: node --cpu-prof --cpu-prof-dir=<dir> bench/profile/grant.mjs granted
// Usage: node bench/profile/grant.mjs [read,unconfirmed,granted] [calls per round] [rounds]
import { GRANTING_POLICY, READ_REF, TENANT_ID, UNCONFIRMED_WRITE_REF, WRITE_REF } from "../lib/tenant.mjs";
import { checkItem, inputOf } from "../lib/work.mjs";
import { createWorld } from "../lib/world.mjs";

const [subjects = "read,unconfirmed,granted", count = "5000", roundCount = "3"] = process.argv.slice(2);
const calls = Number(count);

/** As the user does on the confirmation page: approve the preview's request with a grant for a day. */
async function approveGrant(runtime, principal) {
  const { confirmation } = await runtime.preview(principal, WRITE_REF, inputOf(0));
  if (!confirmation.required || confirmation.mode !== "platform") throw new Error("expected a platform-mode confirmation request");
  const decided = await runtime.decideConfirmation({ tenantId: TENANT_ID, userId: principal.actor.userId }, confirmation.requestId, "approve", {
    seconds: 86_400,
  });
  if (typeof decided.grantId !== "string") throw new Error("the approval made no grant");
}

const worlds = new Map();
for (const subject of subjects.split(",")) {
  const world = await createWorld({ policy: GRANTING_POLICY });
  const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
  const ref = { read: READ_REF, unconfirmed: UNCONFIRMED_WRITE_REF, granted: WRITE_REF }[subject];
  if (ref === undefined) throw new Error(`unknown subject "${subject}": read, unconfirmed or granted`);
  if (subject === "granted") await approveGrant(world.runtime, principal);
  const call = async (i) => checkItem((await world.runtime.execute(principal, ref, inputOf(i))).result, inputOf(i).id, subject);
  for (let i = 0; i < 1_000; i++) await call(i);
  worlds.set(subject, { world, call, rounds: [] });
}
for (let round = 0; round < Number(roundCount); round++) {
  for (const entry of worlds.values()) {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await entry.call(i);
    entry.rounds.push(((performance.now() - started) * 1000) / calls);
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const read = worlds.has("read") ? median(worlds.get("read").rounds) : undefined;
for (const [subject, entry] of worlds) {
  const us = median(entry.rounds);
  console.log(`${subject.padEnd(12)} ${us.toFixed(1).padStart(7)} µs per call${read === undefined ? "" : `  ${(us / read).toFixed(2)}x the read`}`);
  await entry.world.close();
}
