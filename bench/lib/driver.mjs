// The request loop shared by the bench's load workers: the parent names a system once (`setup`), then asks
// for warm-up, sequential and throughput rounds of it; each worker counts the calls that succeeded.
import { sequential, throughput } from "./measure.mjs";
import { serveRequests } from "./processes.mjs";

/** Serves bench requests; `makeSystem(spec)` answers `{ call(i), close?() }` for one system (`spec.doubled`: see `setup`). */
export function serveDriver(makeSystem) {
  const systems = new Map();
  const system = (name) => {
    const found = systems.get(name);
    if (found === undefined) throw new Error(`no system "${name}" was set up in this worker`);
    return found;
  };
  // Each system numbers its calls on, so inputs keep cycling through the items across rounds.
  const counted = (entry) => async (i) => {
    await entry.call(i);
    entry.completed++;
  };
  serveRequests({
    async setup({ spec }) {
      const made = await makeSystem(spec);
      // `doubled` (only the regression guard's own test sets it): each call is made twice in a row, as if a
      // change had doubled its cost; it still counts as one call.
      const call =
        spec.doubled === true
          ? async (i) => {
              await made.call(i);
              await made.call(i + 1);
            }
          : made.call;
      systems.set(spec.name, { ...made, call, completed: 0 });
      return made.info ?? {};
    },
    async warmup({ name, count, maxMs }) {
      const entry = system(name);
      await sequential(counted(entry), { count, maxMs, offset: entry.completed });
    },
    async sequential({ name, count, maxMs }) {
      const entry = system(name);
      return sequential(counted(entry), { count, maxMs, offset: entry.completed });
    },
    async throughput({ name, seconds, inFlight, maxCalls }) {
      const entry = system(name);
      return throughput(counted(entry), { seconds, inFlight, offset: entry.completed, ...(maxCalls === undefined ? {} : { maxCalls }) });
    },
    completed: ({ name }) => system(name).completed,
    async close() {
      for (const entry of systems.values()) await entry.close?.();
      systems.clear();
    },
  });
}
