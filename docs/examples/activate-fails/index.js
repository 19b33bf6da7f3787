export async function activate(sdk) {
  sdk.tools.provide("ping", { execute: () => ({ pong: true }) });
  throw new Error("the database it needs is not reachable");
}
