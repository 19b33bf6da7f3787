/**
 * When a Fetch answer is over: its body read to the end or cancelled, or the client gone. Servers count
 * requests in flight and long polls held open by it.
 */

/**
 * Calls `done` once `answer` is over: when the client went away (`signal` aborts), or its body has been
 * read to the end or cancelled. A body that is already whole (neither an event stream nor a held refusal,
 * which carries its length) is over once the answer is made, so it is not wrapped.
 */
export function whenAnswerOver(answer: Promise<Response>, signal: AbortSignal, done: () => void): Promise<Response> {
  let called = false;
  const once = (): void => {
    if (called) return;
    called = true;
    signal.removeEventListener("abort", once);
    done();
  };
  signal.addEventListener("abort", once, { once: true });
  return answer.then(
    (response) => {
      const body = response.body;
      if (body === null || !isHeldOpen(response)) {
        once();
        return response;
      }
      const reader = body.getReader();
      const watched = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const next = await reader.read();
            if (next.done) {
              controller.close();
              once();
            } else controller.enqueue(next.value);
          } catch (error) {
            controller.error(error);
            once();
          }
        },
        cancel(reason) {
          once();
          return reader.cancel(reason);
        },
      });
      return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
    },
    (error: unknown) => {
      once();
      throw error;
    },
  );
}

/** An answer whose body keeps coming after the head: an event stream, or a refusal held open while the request drains. */
function isHeldOpen(response: Response): boolean {
  return response.headers.get("content-type")?.startsWith("text/event-stream") === true || response.headers.has("content-length");
}
