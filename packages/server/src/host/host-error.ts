/** A start-up problem: bad config, a missing or weak secret, an invalid plugin. `details` lists each problem. */
export class HostError extends Error {
  override readonly name = "HostError";
  constructor(
    message: string,
    readonly details: readonly string[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
