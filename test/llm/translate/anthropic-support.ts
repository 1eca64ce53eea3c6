// Shared by the Anthropic codec tests: SSE text split into (event, data) pairs as the seam feeds them, and an
// SDK `fetch` that answers with a given body.
import { createParser } from "eventsource-parser";

export function sseEvents(text: string): Array<{ event: string | undefined; data: string }> {
  const out: Array<{ event: string | undefined; data: string }> = [];
  const parser = createParser({ onEvent: (e) => out.push({ event: e.event, data: e.data }) });
  parser.feed(text);
  return out;
}

/** A fetch for an SDK client that answers every call with `body` (JSON when an object, else an SSE stream). */
export function answering(body: string | object, status = 200): typeof fetch {
  return (async () => {
    if (typeof body !== "string") return Response.json(body, { status });
    return new Response(body, { status, headers: { "content-type": "text/event-stream" } });
  }) as unknown as typeof fetch;
}
