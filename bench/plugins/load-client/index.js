// The caller plugin of the benchmarks: it calls from outside (HTTP), so it activates nothing.
/** Nothing to provide. */
export function activate() {}
