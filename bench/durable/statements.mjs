// Counts what one call costs the PostgreSQL store: statements sent to the server, by name (each is one round
// trip on the connection that runs it, and, outside BEGIN/COMMIT, its own transaction), for a warm read
// execute through the HTTP credentials path (authenticate + execute, as `toolpact serve` runs it) and for a
// confirmed write (authenticate + preview, authenticate + execute). Background work (config refresh,
// recovery and expiry passes) shows as fractions.
//   node bench/durable/statements.mjs [--calls 200]
import { parseArgs } from "node:util";
import pg from "pg";
import { createFreshDatabase, postgresVersion } from "../lib/postgres.mjs";
import { READ_REF, WRITE_REF } from "../lib/tenant.mjs";
import { createWorld } from "../lib/world.mjs";

const { values } = parseArgs({ options: { calls: { type: "string", default: "200" } } });
const CALLS = Number(values.calls);

/** Every statement any `pg` client of this process sends, by its text's first words (named statements by name). */
const sent = { total: 0, byName: new Map() };
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  sent.total += 1;
  const name = typeof config === "string" ? config.split(/\s+/, 2).join(" ") : (config?.name ?? String(config?.text).split(/\s+/, 2).join(" "));
  sent.byName.set(name, (sent.byName.get(name) ?? 0) + 1);
  return query.call(this, config, ...rest);
};

const server = await postgresVersion();
if (server.error !== undefined) throw new Error(`PostgreSQL is not reachable: ${server.error}`);
const database = await createFreshDatabase();
const world = await createWorld({ database: database.url });
const credentials = { pluginKey: world.pluginKey, actorToken: world.actorToken };

async function measure(label, call) {
  for (let i = 0; i < 20; i++) await call(i); // warm: prepared statements, caches
  const before = { statements: sent.total, byName: new Map(sent.byName) };
  for (let i = 0; i < CALLS; i++) await call(i);
  const names = [...sent.byName]
    .map(([name, n]) => [name, (n - (before.byName.get(name) ?? 0)) / CALLS])
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name} ${n.toFixed(2)}`);
  console.log(`${label}: ${((sent.total - before.statements) / CALLS).toFixed(2)} statements/call (${names.join(", ")})`);
}

try {
  await measure("read execute (authenticate + execute)", async (i) => {
    const principal = await world.runtime.authenticate(credentials);
    await world.runtime.execute(principal, READ_REF, { id: `item-${i % 50}` });
  });
  await measure("confirmed write (authenticate + preview, authenticate + execute)", async (i) => {
    const input = { id: `item-${i}` };
    const previewed = await world.runtime.preview(await world.runtime.authenticate(credentials), WRITE_REF, input);
    await world.runtime.execute(await world.runtime.authenticate(credentials), WRITE_REF, input, { confirmationToken: previewed.confirmation.token });
  });
} finally {
  await world.close();
  await database.drop();
}
