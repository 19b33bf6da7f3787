// The upstream benchmark's worker: serves the two systems of systems.mjs to bench/upstream/run.mjs.
import { serveDriver } from "../lib/driver.mjs";
import { startDirect, startThroughToolpact } from "./systems.mjs";

serveDriver((spec) => (spec.kind === "direct" ? startDirect() : startThroughToolpact()));
