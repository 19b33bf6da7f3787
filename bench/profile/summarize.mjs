// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): self time by component, the hottest functions, and
// inclusive time of toolpact's own frames (time spent in them and everything they called).

const PNPM_PACKAGE = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//;
const WORKSPACE = /\/(packages\/[^/]+|codegen)\/dist\//;

/** The component a frame belongs to: a package, a toolpact package, a Node subsystem, or V8 itself. */
export function componentOf(callFrame) {
  const { functionName, url } = callFrame;
  if (functionName === "(idle)") return "(idle)";
  if (functionName === "(garbage collector)") return "V8: garbage collector";
  if (functionName === "(program)" || functionName === "(root)") return "V8: program (native, unattributed)";
  if (url === "") return "V8/native builtins";
  const workspace = WORKSPACE.exec(url);
  if (workspace) return `toolpact ${workspace[1].replace("packages/", "")}`;
  const pkg = PNPM_PACKAGE.exec(url);
  if (pkg) return pkg[1];
  if (url.includes("/bench/")) return "bench (plugin, work)";
  if (url.startsWith("node:")) {
    const name = url.slice(5).replace(/^internal\/(deps\/)?/, "");
    if (/^(http|_http|https)/.test(name)) return "node: http";
    if (/^(net|stream|streams|stream_base|tcp)/.test(name) || name.startsWith("internal/streams")) return "node: net + streams";
    if (name.startsWith("undici")) return "node: undici (fetch)";
    if (name.startsWith("crypto")) return "node: crypto";
    if (/^(process|timers|async_hooks|event_target|events|abort_controller)/.test(name)) return "node: events, timers, async";
    return "node: other";
  }
  return "other";
}

const frameKey = (callFrame) => `${callFrame.functionName || "(anonymous)"} ${callFrame.url}:${callFrame.lineNumber + 1}`;
const shortUrl = (url) =>
  url
    .replace(/^file:\/\/.*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")
    .replace(/^file:\/\/.*\/(packages\/[^/]+\/dist\/)/, "$1")
    .replace(/^file:\/\/.*\/bench\//, "bench/");

/** True for a frame of Node's HTTP server: samples before the first one are start-up, not request handling. */
export const isHttpServerFrame = (callFrame) => callFrame.url === "node:_http_server";

/**
 * Self and inclusive times (µs) from a parsed .cpuprofile. With `startAt(callFrame)`, samples before the
 * first sample with such a frame on its stack are left out (e.g. process start-up before the first request).
 */
/** @param {any} profile @param {{ startAt?: (callFrame: any) => boolean }} [options] */
export function summarizeProfile(profile, { startAt } = {}) {
  /** @type {Map<number, any>} */
  const nodes = new Map(profile.nodes.map((/** @type {any} */ node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  let first = 0;
  if (startAt !== undefined) {
    const matches = (id) => {
      for (let current = id; current !== undefined; current = parentOf.get(current)) if (startAt(nodes.get(current).callFrame)) return true;
      return false;
    };
    first = profile.samples.findIndex(matches);
    if (first < 0) throw new Error("no sample matches startAt: the profile holds no request handling");
  }
  const self = new Map();
  for (let i = first; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byComponent = new Map();
  const selfByFrame = new Map();
  let total = 0;
  let idle = 0;
  for (const node of nodes.values()) {
    const time = self.get(node.id) ?? 0;
    const component = componentOf(node.callFrame);
    if (component === "(idle)") {
      idle += time;
      continue;
    }
    total += time;
    byComponent.set(component, (byComponent.get(component) ?? 0) + time);
    const key = frameKey(node.callFrame);
    const entry = selfByFrame.get(key) ?? { frame: node.callFrame, component, time: 0 };
    entry.time += time;
    selfByFrame.set(key, entry);
  }
  // Inclusive time per frame: each sample counts once per distinct frame on its stack (recursion is not double counted).
  const subtree = new Map();
  const sumSubtree = (id) => {
    /** @type {[number, boolean][]} */
    const stack = [[id, false]];
    while (stack.length > 0) {
      const [current, visited] = /** @type {[number, boolean]} */ (stack.pop());
      const node = nodes.get(current);
      if (visited) {
        let sum = self.get(current) ?? 0;
        for (const child of node.children ?? []) sum += subtree.get(child);
        subtree.set(current, sum);
      } else {
        stack.push([current, true]);
        for (const child of node.children ?? []) stack.push([child, false]);
      }
    }
  };
  const root = profile.nodes[0].id;
  sumSubtree(root);
  const inclusiveByFrame = new Map();
  const active = new Map();
  /** @type {[number, boolean][]} */
  const walk = [[root, false]];
  while (walk.length > 0) {
    const [id, leaving] = /** @type {[number, boolean]} */ (walk.pop());
    const node = nodes.get(id);
    const key = frameKey(node.callFrame);
    if (leaving) {
      active.set(key, active.get(key) - 1);
      continue;
    }
    if (!active.get(key)) {
      const entry = inclusiveByFrame.get(key) ?? { frame: node.callFrame, component: componentOf(node.callFrame), time: 0 };
      entry.time += subtree.get(id);
      inclusiveByFrame.set(key, entry);
    }
    active.set(key, (active.get(key) ?? 0) + 1);
    walk.push([id, true]);
    for (const child of node.children ?? []) walk.push([child, false]);
  }
  return { total, idle, byComponent, selfByFrame, inclusiveByFrame };
}

/** Markdown tables of a summary: components, top self frames, top inclusive toolpact frames; times per call. */
/** @param {ReturnType<typeof summarizeProfile>} summary @param {{ calls: number, top?: number }} options */
export function profileTables(summary, { calls, top = 20 }) {
  const pct = (time) => `${((time / summary.total) * 100).toFixed(1)} %`;
  const perCall = (time) => (time / calls).toFixed(1);
  const components = [...summary.byComponent].sort((a, b) => b[1] - a[1]);
  const lines = ["| component | self µs per call | share of busy time |", "| --- | ---: | ---: |"];
  for (const [component, time] of components) if (time / summary.total >= 0.005) lines.push(`| ${component} | ${perCall(time)} | ${pct(time)} |`);
  const frameRow = (entry) =>
    `| \`${entry.frame.functionName || "(anonymous)"}\` | ${shortUrl(entry.frame.url)}:${entry.frame.lineNumber + 1} | ${entry.component} | ${perCall(entry.time)} | ${pct(entry.time)} |`;
  const selfRows = [...summary.selfByFrame.values()].sort((a, b) => b.time - a.time).slice(0, top);
  const toolpactRows = [...summary.inclusiveByFrame.values()]
    .filter(
      (entry) =>
        entry.component.startsWith("toolpact") || entry.component.startsWith("@trpc") || entry.component === "better-sqlite3" || entry.component === "jose",
    )
    .sort((a, b) => b.time - a.time)
    .slice(0, top * 2);
  return [
    `Busy (non-idle) time ${perCall(summary.total)} µs per call (${(summary.total / 1000).toFixed(0)} ms for ${calls.toLocaleString("en-US")} calls); idle ${(summary.idle / 1000).toFixed(0)} ms.`,
    "",
    lines.join("\n"),
    "",
    "Hottest functions by self time:",
    "",
    "| function | where | component | self µs per call | share |",
    "| --- | --- | --- | ---: | ---: |",
    ...selfRows.map(frameRow),
    "",
    "toolpact, tRPC, better-sqlite3 and jose frames by inclusive time (the frame and everything it called):",
    "",
    "| function | where | component | inclusive µs per call | share |",
    "| --- | --- | --- | ---: | ---: |",
    ...toolpactRows.map(frameRow),
  ].join("\n");
}

/** Markdown table comparing self time per call by component between two profiled servers. */
export function compareComponents(a, b, { callsA, callsB, labelA, labelB }) {
  const names = new Set([...a.byComponent.keys(), ...b.byComponent.keys()]);
  const rows = [...names]
    .map((name) => {
      const x = (a.byComponent.get(name) ?? 0) / callsA;
      const y = (b.byComponent.get(name) ?? 0) / callsB;
      return { name, x, y, diff: x - y };
    })
    .filter((row) => Math.max(row.x, row.y) >= 1)
    .sort((p, q) => q.diff - p.diff);
  const totalA = a.total / callsA;
  const totalB = b.total / callsB;
  return [
    `| component | ${labelA} µs per call | ${labelB} µs per call | difference |`,
    "| --- | ---: | ---: | ---: |",
    ...rows.map((row) => `| ${row.name} | ${row.x.toFixed(1)} | ${row.y.toFixed(1)} | ${row.diff >= 0 ? "+" : ""}${row.diff.toFixed(1)} |`),
    `| **busy time in all** | **${totalA.toFixed(1)}** | **${totalB.toFixed(1)}** | **${totalA - totalB >= 0 ? "+" : ""}${(totalA - totalB).toFixed(1)}** |`,
  ].join("\n");
}
