// The abusive caller, in a process of its own so that its work never slows the well-behaved caller's
// client: it opens WAITS long-polls on one pending confirmation, then sends deeply nested bodies
// DEEP_IN_FLIGHT at a time until it is told to stop (a line on stdin) or its own deadline passes.
// Prints "ready" once every long-poll has been answered or is being held, and the answers it got by
// HTTP status (and the Retry-After values of its 429s) as one JSON line when it stops.
const [url, headersJson, waitUrl] = process.argv.slice(2);
const headers = JSON.parse(headersJson);
const WAITS = 3000;
const DEEP_IN_FLIGHT = Number(process.env.ABUSE_DEEP_IN_FLIGHT ?? 8);
const DEEP_NESTING = 400_000;
const DEADLINE = Date.now() + 60_000;

const statuses = {};
const retryAfter = new Set();
const record = (response) => {
  statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  const header = response.headers.get("retry-after");
  if (response.status === 429 && header !== null) retryAfter.add(header);
};

// A controller per long-poll: undici resets the listener bound of a signal it is given, so one shared signal warns.
const controllers = Array.from({ length: WAITS }, () => new AbortController());
let answered = 0;
const waits = controllers.map((controller) =>
  fetch(waitUrl, { headers, signal: controller.signal })
    .then(async (response) => {
      record(response);
      answered++;
      await response.arrayBuffer();
    })
    .catch(() => undefined),
);

let running = true;
process.stdin.on("data", () => (running = false));
const deepBody = `{"ref":{"providerId":"com.test.pg","tool":"sync"},"input":{"title":${"[".repeat(DEEP_NESTING)}${"]".repeat(DEEP_NESTING)}}}`;
const deepLoops = Array.from({ length: DEEP_IN_FLIGHT }, async () => {
  while (running && Date.now() < DEADLINE) {
    try {
      const response = await fetch(`${url}/trpc/tools.execute`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: deepBody,
      });
      record(response);
      await response.arrayBuffer();
    } catch {
      // A refused or reset connection is an answer too: the server chose not to read the rest.
    }
  }
});

// Ready once all but the held long-polls have their answer (the server holds at most its per-caller bound).
const readyTimer = setInterval(() => {
  if (answered >= WAITS - 64 || Date.now() > DEADLINE) {
    clearInterval(readyTimer);
    process.stdout.write("ready\n");
  }
}, 20);

await Promise.all(deepLoops);
clearInterval(readyTimer);
for (const controller of controllers) controller.abort();
await Promise.all(waits);
process.stdout.write(`${JSON.stringify({ statuses, retryAfter: [...retryAfter] })}\n`);
process.exit(0);
