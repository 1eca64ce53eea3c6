// A reference target for `bun run bench`: the least a Bun proxy can do (request → fetch upstream → the upstream's
// body as the response), with no keys, no parsing, no metering. It shows the floor the runtime sets on this
// machine, so a gateway's row can be read against what is possible at all.
//   bun bench/bare-proxy.ts <port> <upstream base URL>

const [port, upstream] = [Number(process.argv[2]), process.argv[3]!];

Bun.serve({
  port,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    const res = await fetch(upstream + url.pathname, {
      method: req.method,
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body: await req.text(),
      signal: req.signal,
    });
    return new Response(res.body, {
      status: res.status,
      headers: { "content-type": res.headers.get("content-type") ?? "application/json" },
    });
  },
});
