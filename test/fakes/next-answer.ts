// A fake provider for the billing tests: every request, on Anthropic's and OpenAI's paths alike, gets the answer
// the test set last (a JSON body, or SSE text), written in the provider's documented shape by the test itself.
export interface NextAnswerUpstream {
  /** The answer every following request gets. */
  answer(next: { json?: object; sse?: string }): void;
  /** The gateway's settings that send Anthropic and OpenAI calls here. */
  env: Record<string, string>;
  stop(): void;
}

export function startNextAnswerUpstream(): NextAnswerUpstream {
  let next: { json?: object; sse?: string } = {};
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      if (next.sse) return new Response(next.sse, { headers: { "content-type": "text/event-stream" } });
      return Response.json(next.json);
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    answer: (answer) => void (next = answer),
    env: {
      ANTHROPIC_API_KEY: "sk-ant-fake",
      ANTHROPIC_BASE_URL: base,
      OPENAI_API_KEY: "sk-fake",
      OPENAI_BASE_URL: `${base}/v1`,
    },
    stop: () => server.stop(true),
  };
}
