// A chat-completions upstream for the bench's open-streams and soak sections: it answers at once, or, when the last
// message says "dribble <events>x<gap ms>", streams one content event per gap so the call stays open as a slow model's
// would. GET /stats counts the streams open now and at most, so the bench can tell how many calls the gateway really
// had in flight upstream at once.
//   bun bench/dribble-upstream.ts <port>

const encoder = new TextEncoder();
let open = 0;
let maxOpen = 0;
let served = 0;

const ID = "chatcmpl-bench0000000000000000000000";
const usage = (completion: number) => ({
  prompt_tokens: 19,
  completion_tokens: completion,
  total_tokens: 19 + completion,
});
const chunk = (model: string, delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: ID, object: "chat.completion.chunk", created: 1767225661, model, choices: [{ index: 0, delta, finish_reason: finish }], usage: null })}\n\n`;

function events(model: string, words: number, withUsage: boolean): string[] {
  const out = [chunk(model, { role: "assistant", content: "" }, null)];
  for (let k = 0; k < words; k++) out.push(chunk(model, { content: `word${k} ` }, null));
  out.push(chunk(model, {}, "stop"));
  if (withUsage)
    out.push(
      `data: ${JSON.stringify({ id: ID, object: "chat.completion.chunk", created: 1767225661, model, choices: [], usage: usage(words) })}\n\n`,
    );
  out.push("data: [DONE]\n\n");
  return out;
}

function dribbled(parts: string[], gapMs: number): ReadableStream<Uint8Array> {
  let cancelled = false;
  open++;
  maxOpen = Math.max(maxOpen, open);
  const done = () => {
    if (!cancelled) open--;
    cancelled = true;
  };
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        for (const [k, part] of parts.entries()) {
          if (cancelled) return;
          if (k > 0) await Bun.sleep(gapMs);
          if (cancelled) return;
          controller.enqueue(encoder.encode(part));
        }
        controller.close();
      } catch {
        // the gateway went away mid-stream: nothing more to write
      }
      done();
    },
    cancel: done,
  });
}

const listenOn = Number(process.argv[2] ?? 19400);
Bun.serve({
  port: listenOn,
  hostname: "127.0.0.1",
  idleTimeout: 120,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (req.method === "HEAD") return new Response(null);
    if (path === "/stats") return Response.json({ open, maxOpen, served });
    if (path === "/stats/reset") return ((maxOpen = open), Response.json({ open, maxOpen, served }));
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) return new Response("not found", { status: 404 });
    served++;
    const body = (await req.json()) as {
      model?: string;
      stream?: boolean;
      messages?: { content?: unknown }[];
      stream_options?: { include_usage?: boolean };
    };
    const model = String(body.model);
    const last = body.messages?.at(-1)?.content;
    const asked = typeof last === "string" ? /dribble (\d+)x(\d+)/.exec(last) : null;
    if (!body.stream) {
      const message = { role: "assistant", content: "Hello! How can I help?" };
      return Response.json({
        id: ID,
        object: "chat.completion",
        created: 1767225661,
        model,
        choices: [{ index: 0, message, finish_reason: "stop" }],
        usage: usage(7),
      });
    }
    const withUsage = body.stream_options?.include_usage === true;
    const headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };
    if (!asked) return new Response(events(model, 3, withUsage).join(""), { headers });
    return new Response(dribbled(events(model, Number(asked[1]), withUsage), Number(asked[2])), { headers });
  },
});
console.log(`http://127.0.0.1:${listenOn}`);
