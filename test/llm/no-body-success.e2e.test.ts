// An upstream success with no body (204, 205) is passed on as it came, and nothing is charged:
// the proxy tells such an answer by its status (upstream.ts successWithoutBody), not by reading `res.body`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { expectVoided, providerEnv } from "./support";

let upstream: ReturnType<typeof Bun.serve>;
let gw: TestGateway;
beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => new Response(null, { status: Number(new URL(req.url).searchParams.get("status") ?? 204) }),
  });
  gw = await startGateway(providerEnv(`http://127.0.0.1:${upstream.port}`));
});
afterAll(async () => {
  await gw.stop();
  upstream.stop(true);
});

for (const status of [204, 205]) {
  test(`an upstream ${status}: the client gets ${status} with no body and the gateway's headers; nothing is charged`, async () => {
    const { key, accountId } = await gw.account(100);
    const r = await gw.post(key, `/v1/chat/completions?status=${status}`, {
      model: "gpt-5.2",
      max_completion_tokens: 10,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(r.status).toBe(status);
    expect(await r.text()).toBe("");
    expect(r.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    await expectVoided(gw, accountId, 100);
  });
}

test("a translated call whose upstream answers 204: passed on as the native path does (no body, no 500); nothing is charged", async () => {
  const { key, accountId } = await gw.account(100);
  const r = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "gpt-5.2", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }),
  });
  expect(r.status).toBe(204);
  expect(await r.text()).toBe("");
  await expectVoided(gw, accountId, 100);
});
