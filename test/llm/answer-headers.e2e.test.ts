// Every LLM answer carries the gateway's headers exactly once (the request id in both SDK spellings, the key's
// rate-limit state), whichever way it was sent: a JSON answer, a stream in one piece or pumped, a passed-through
// upstream error. The access log names each call by that request id.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startEnv, stopEnv, type Env } from "./support";
import { withAccessLog } from "../support/gateway";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const chat = (stream: boolean) => ({
  model: "gpt-5.2",
  max_completion_tokens: 100,
  ...(stream && { stream: true }),
  messages: [{ role: "user", content: "Hi" }],
});

function expectGatewayHeaders(r: Response) {
  const id = r.headers.get("x-request-id");
  expect(id).toMatch(/^req_[0-9a-f]{32}$/); // one value: a header set twice would read "a, b"
  expect(r.headers.get("request-id")).toBe(id);
  expect(r.headers.get("x-ratelimit-limit")).toMatch(/^\d+$/);
  expect(r.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
  expect(r.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
  return id!;
}

test("JSON, whole and pumped streams, and upstream errors all carry the request id and rate-limit state once; the access log has each", async () => {
  await withAccessLog(e.gw, async (logged) => {
    const { key } = await e.gw.account(100);
    const cases: Array<[string, object, object, number, string]> = [
      ["json", chat(false), { kind: "ok" }, 200, "application/json"],
      ["stream in one piece", chat(true), { kind: "ok", whole: true }, 200, "text/event-stream"],
      ["pumped stream", chat(true), { kind: "slow", firstByteMs: 0, chunkDelayMs: 1 }, 200, "text/event-stream"],
      ["upstream 429", chat(false), { kind: "error", status: 429, retryAfter: "7" }, 429, "application/json"],
    ];
    const ids: string[] = [];
    for (const [name, body, scenario, status, type] of cases) {
      e.fake.enqueue(scenario as any);
      const r = await fetch(e.gw.url + "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect([name, r.status]).toEqual([name, status]);
      expect(r.headers.get("content-type")).toStartWith(type);
      if (status === 429) expect(r.headers.get("retry-after")).toBe("7");
      ids.push(expectGatewayHeaders(r));
      await r.arrayBuffer();
    }
    expect(ids.length).toBe(4);
    for (let i = 0; i < 100 && logged.length < ids.length; i++) await Bun.sleep(5); // logged once each answer is sent
    for (const id of ids)
      expect(logged.find((f) => f.request_id === id)).toMatchObject({ route: "/v1/chat/completions", method: "POST" });
  });
});
