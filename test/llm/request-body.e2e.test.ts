// The request body on its way upstream: the client's bytes as they came when nothing had to change; the model
// renamed at the top level only; a body the gateway cannot serialise again (nested deeper than 256 levels) refused
// before anything is held or sent; and a failure no path settled never leaves a hold held.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadCatalog } from "../../src/catalog-loader";
import { handleLlm, type LlmDeps } from "../../src/llm/proxy";
import { buildProviders } from "../../src/llm/providers";
import { protocols } from "../../src/llm/protocols/index";
import type { Finish } from "../../src/llm/records";
import { silentLogger } from "../../src/log";
import { expectVoided, providerEnv, startEnv, stopEnv, type Env } from "./support";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const post = (key: string, path: string, body: string) =>
  fetch(e.gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });

test("a body nothing had to change reaches the upstream as the client's bytes: spacing, key order, escapes, non-ASCII", async () => {
  const { key } = await e.gw.account(100);
  const sent =
    '{ "messages" : [ {"role":"user","content":"h\\u00e9llo — ✓ 漢字 \\ud83d\\ude00 \\"q\\""} ],\n  "model":"gpt-5.2", "max_completion_tokens": 50 }';
  const r = await post(key, "/v1/chat/completions", sent);
  expect(r.status).toBe(200);
  await r.text();
  expect(e.fake.requests.at(-1)!.body).toBe(sent);
});

test("an escaped top-level `model` key: the upstream's model name goes to the top level, not into a nested `model` field", async () => {
  const { key } = await e.gw.account(100);
  const sent =
    '{"mod\\u0065l":"claude-opus-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"metadata":{"model":"claude-opus-4-5"}}';
  const r = await fetch(e.gw.url + "/v1/messages", {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: sent,
  });
  expect(r.status).toBe(200);
  await r.text();
  const up = JSON.parse(e.fake.requests.at(-1)!.body);
  expect(up.model).toBe("claude-opus-4-5-20251101"); // catalog id → upstream name
  expect(up.metadata).toEqual({ model: "claude-opus-4-5" });
});

describe("a body nested too deeply to serialise again: 400 in the caller's shape, nothing held, nothing upstream", () => {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  const cases: Array<[string, string, string, (r: any) => void]> = [
    [
      "Anthropic with max_credits (removed before forwarding)",
      "/v1/messages",
      `{"model":"claude-opus-4-5","max_tokens":100,"max_credits":1000,"messages":[{"role":"user","content":"hi"}],"metadata":{"x":${deep(60_000)}}}`,
      (r) =>
        expect(r).toMatchObject({ type: "error", error: { type: "invalid_request_error", code: "invalid_request" } }),
    ],
    [
      "a chat stream with stream_options (include_usage added)",
      "/v1/chat/completions",
      `{"model":"gpt-5.2","stream":true,"max_completion_tokens":100,"stream_options":{"include_usage":false},"messages":[{"role":"user","content":"hi"}],"metadata":{"x":${deep(60_000)}}}`,
      (r) => expect(r).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_request" } }),
    ],
  ];
  for (const [name, path, body, shape] of cases) {
    test(name, async () => {
      const { accountId, key } = await e.gw.account(100);
      const before = e.fake.requests.length;
      const r = await post(key, path, body);
      expect(r.status).toBe(400);
      const err = await r.json();
      shape(err);
      expect(JSON.stringify(err)).toContain("nested more than 256 levels deep");
      expect(e.fake.requests.length).toBe(before);
      await expectVoided(e.gw, accountId, 100, 0);
    });
  }

  test("max_credits itself nested deep: refused as invalid_max_credits at once, nothing held", async () => {
    const { accountId, key } = await e.gw.account(100);
    // (serialising it to measure it overflowed the stack after blocking the event loop for over a second: a 500)
    const r = await post(
      key,
      "/v1/chat/completions",
      `{"model":"gpt-5.2","max_completion_tokens":10,"messages":[{"role":"user","content":"hi"}],"max_credits":${deep(60_000)}}`,
    );
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: { code: "invalid_max_credits", param: "max_credits" } });
    await expectVoided(e.gw, accountId, 100, 0);
  });

  test("DeepSeek on /v1/responses (translated): 400 before any hold, nothing recorded or held, nothing upstream", async () => {
    const { accountId, key } = await e.gw.account(100);
    const before = e.fake.requests.length;
    const r = await post(
      key,
      "/v1/responses",
      `{"model":"deepseek-test","max_output_tokens":100,"input":"hi","metadata":{"x":${deep(60_000)}}}`,
    );
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({
      error: {
        code: "unsupported_for_model",
        param: "metadata",
        message: "metadata is nested more than 256 levels deep",
      },
    });
    expect(e.fake.requests.length).toBe(before);
    await expectVoided(e.gw, accountId, 100, 0);
  });
});

test("an error that no path settled still releases the call's hold (the proxy's last line of defence)", async () => {
  const finishes: Finish[] = [];
  const d: LlmDeps = {
    ctx: {
      catalog: loadCatalog(providerEnv("http://127.0.0.1:9").CATALOG_PATH),
      config: { body: { seconds: 30, maxBytes: 128 * 1024 ** 2 } },
      log: silentLogger,
    } as any,
    providers: buildProviders(providerEnv("http://127.0.0.1:9")),
    ledger: {
      hold: async (_a: string, amount: number, id: string) => ({ id, accountId: "acc_1", amount }),
      postOrVoid: (f: Finish) => void finishes.push(f),
    } as any,
    timeouts: { firstByteMs: 60_000, silenceMs: 60_000 },
    budgets: { hold: () => null, post: () => {} } as any, // a key without a budget
  };
  const real = new Request("http://gw/v1/responses", {
    method: "POST",
    body: JSON.stringify({ model: "deepseek-test", input: "hi", max_output_tokens: 10 }),
  });
  // The defect: the request's signal, read once after the hold (the client-gone check), throws on the next read,
  // where the translated path takes it for the upstream call.
  let signalReads = 0;
  const request = new Proxy(real, {
    get(t, k) {
      if (k === "signal" && ++signalReads > 1) throw new Error("a defect after the hold");
      const v = Reflect.get(t, k, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
  const auth = { accountId: "acc_1", keyId: "key_1", models: null, budget: {} } as any;
  await expect(
    handleLlm(d, protocols.responses, "/v1/responses", request, auth, { "x-request-id": "req_1" }),
  ).rejects.toThrow("a defect after the hold");
  expect(finishes.length).toBe(1);
  expect(finishes[0]!.charge).toBeNull();
  expect(finishes[0]!.record).toMatchObject({ requestId: "req_1", status: "failed", cost: 0 });
});
