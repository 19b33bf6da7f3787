// Counts what one call costs the PostgreSQL store: statements sent to the server (each one round trip on the
// connection that runs it, BEGIN and COMMIT counted as statements) and transactions committed, for a warm
// read execute through the HTTP credentials path (authenticate + execute, as `toolpact serve` runs it) and
// for a confirmed write (authenticate + preview, authenticate + execute).
//   node bench/durable/statements.mjs [--calls 200]
import { parseArgs } from "node:util";
import pg from "pg";
import { createFreshDatabase, postgresVersion, queryRows } from "../lib/postgres.mjs";
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
const commits = async () => Number((await queryRows(database.url, "SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()"))[0].n);

async function measure(label, call) {
  for (let i = 0; i < 20; i++) await call(i); // warm: prepared statements, caches
  // pg_stat_database is updated when a backend's transaction ends and read from a snapshot: let it settle.
  await new Promise((resolve) => setTimeout(resolve, 700));
  const before = { statements: sent.total, byName: new Map(sent.byName), commits: await commits() };
  for (let i = 0; i < CALLS; i++) await call(i);
  await new Promise((resolve) => setTimeout(resolve, 700));
  const statements = (sent.total - before.statements - 1) / CALLS; // less the commits() query itself
  const transactions = (await commits()) - before.commits - 2; // less the two counting queries
  const names = [...sent.byName]
    .map(([name, n]) => [name, (n - (before.byName.get(name) ?? 0)) / CALLS])
    .filter(([name, n]) => n > 0 && !String(name).startsWith("SELECT xact_commit"))
    .map(([name, n]) => `${name} ${n.toFixed(2)}`);
  console.log(`${label}: ${statements.toFixed(2)} statements/call, ${(transactions / CALLS).toFixed(2)} transactions/call (${names.join(", ")})`);
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
