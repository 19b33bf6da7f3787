/** A stand-in OpenTelemetry collector: an HTTP server on 127.0.0.1 that keeps every OTLP/HTTP JSON export it is sent. */
import { createServer, type Server } from "node:http";

/** One export as received. */
export interface Received {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: string;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly received: Received[];
  close(): Promise<void>;
}

/** Starts a receiver answering every POST 200 `{}` (OTLP/HTTP's success). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ path: request.url ?? "", contentType: request.headers["content-type"], body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the receiver has no port");
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
