// Measuring loops used by the bench workers. Every loop is bounded in count and in time.

/** Runs `call(i)` one at a time, at most `count` times and for at most `maxMs`; returns each latency in ms. */
export async function sequential(call, { count, maxMs, offset = 0 }) {
  const samples = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await call(offset + i);
    const ended = performance.now();
    samples.push(ended - started);
    if (ended > deadline) break;
  }
  return samples;
}

/**
 * Keeps `inFlight` calls going for `seconds` (and at most `maxCalls` calls); answers the calls finished and
 * the time they took. Every call that was started is awaited, so `calls / seconds` is a completed rate.
 */
export async function throughput(call, { seconds, inFlight, maxCalls = 10_000_000, offset = 0 }) {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let issued = 0;
  let completed = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < deadline && issued < maxCalls) {
        await call(offset + issued++);
        completed++;
      }
    }),
  );
  return { calls: completed, seconds: (performance.now() - started) / 1000 };
}

/**
 * Times a synchronous or asynchronous operation in batches of `batch` calls for about `seconds`;
 * answers the median cost of one call in nanoseconds and how many calls were timed.
 */
export async function costPerCall(operation, { seconds, batch, minBatches = 5, maxBatches = 10_000 }) {
  const perCall = [];
  const deadline = performance.now() + seconds * 1000;
  let calls = 0;
  while ((performance.now() < deadline || perCall.length < minBatches) && perCall.length < maxBatches) {
    const started = performance.now();
    for (let i = 0; i < batch; i++) {
      const result = operation(i);
      if (result !== undefined && typeof result.then === "function") await result;
    }
    perCall.push(((performance.now() - started) * 1e6) / batch);
    calls += batch;
  }
  perCall.sort((a, b) => a - b);
  return { ns: perCall[Math.floor(perCall.length / 2)], calls };
}
