import { afterEach, describe, expect, it } from "vitest";
import { REPEAT_WINDOW_MS, listenForStop, type StopSignals } from "./stop-signals.js";

describe("listenForStop", () => {
  let listening: StopSignals | undefined;
  afterEach(() => listening?.done());

  it("answers the first signal, takes a repeat within the window for the same request, and a later one as 'stop at once'", async () => {
    let clock = 1_000;
    const forced: NodeJS.Signals[] = [];
    listening = listenForStop(
      ["SIGUSR2"],
      (signal) => forced.push(signal),
      () => clock,
    );
    process.emit("SIGUSR2", "SIGUSR2");
    expect(await listening.first).toBe("SIGUSR2");
    // `timeout` and a terminal's Ctrl-C deliver one request twice: directly and through the process group.
    clock += REPEAT_WINDOW_MS - 1;
    process.emit("SIGUSR2", "SIGUSR2");
    expect(forced).toEqual([]);
    clock += 1;
    process.emit("SIGUSR2", "SIGUSR2");
    expect(forced).toEqual(["SIGUSR2"]);
    process.emit("SIGUSR2", "SIGUSR2");
    expect(forced, "stop at once runs once").toEqual(["SIGUSR2"]);
  });

  it("stops listening at done(): no listener is left behind", () => {
    const before = process.listenerCount("SIGUSR2");
    listening = listenForStop(["SIGUSR2"], () => {});
    expect(process.listenerCount("SIGUSR2")).toBe(before + 1);
    listening.done();
    expect(process.listenerCount("SIGUSR2")).toBe(before);
  });
});
