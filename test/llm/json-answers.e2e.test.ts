// Non-streaming (JSON) answers: one that ends within WHOLE_ANSWER_BYTES reaches the client in one piece with its
// length, byte for byte; a larger one is forwarded as it arrives (memory stays bounded); a broken upstream
// connection before any of it was sent is a clean 502 in the caller's protocol; a client leaving mid-answer stops
// the upstream. Charges are read from the ledger.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { WHOLE_ANSWER_BYTES } from "../../src/llm/answer-head";
import { fixtureBytes } from "../fakes/fixtures";
import { expectCharged, expectVoided, leaveAfter, ledgerOf, startEnv, stopEnv, PRICES, type Env } from "./support";
import { errorOf, jsonOf } from "../support/json";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const P = PRICES["claude-opus-4-5"];
// A_nonstream.json's usage: 38 input, 2113 cache read, 74 output.
const CHARGE = 38 * P.input + 2113 * P.cacheRead + 74 * P.output;
const message = { model: "claude-opus-4-5", max_tokens: 1000, messages: [{ role: "user", content: "Hi" }] };
const post = (key: string, path: string, body: object, signal?: AbortSignal) =>
  fetch(e.gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });

/** The fixture's answer arrived in one piece: 200, its length stated, byte for byte; charged exactly. */
async function expectWholeAnswer(r: Response, accountId: string) {
  expect(r.status).toBe(200);
  const bytes = new Uint8Array(await r.arrayBuffer());
  expect(r.headers.get("content-length")).toBe(String(bytes.length));
  expect(bytes).toEqual(fixtureBytes("A_nonstream.json"));
  await expectCharged(e.gw, accountId, 100, CHARGE);
}

test("a JSON answer sent by the upstream in irregular pieces reaches the client whole, with its length, byte for byte", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "ok", chunked: true });
  const r = await post(key, "/v1/messages", message);
  expect(r.headers.get("content-type")).toStartWith("application/json");
  await expectWholeAnswer(r, accountId);
});

test("a gzip-compressed JSON answer reaches the client decompressed, with its length, and is metered exactly", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "ok", gzip: true });
  const r = await post(key, "/v1/messages", message);
  expect(r.headers.get("content-encoding")).toBeNull();
  await expectWholeAnswer(r, accountId);
});

test("a JSON answer larger than the whole-answer limit is forwarded as it arrives, and metered exactly", async () => {
  const { accountId, key } = await e.gw.account(100);
  const pad = WHOLE_ANSWER_BYTES * 3;
  e.fake.enqueue({ kind: "ok", chunked: true, pieceBytes: 4096, chunkDelayMs: 2, padBytes: pad });
  const r = await post(key, "/v1/messages", message);
  expect(r.status).toBe(200);
  const reader = r.body!.getReader();
  const first = await reader.read();
  const up = e.fake.requests.at(-1)!;
  expect(up.finishedAt).toBeUndefined(); // the upstream is still sending: nothing waited for the end
  const parts = [first.value!];
  for (let x = await reader.read(); !x.done; x = await reader.read()) parts.push(x.value);
  const text = new TextDecoder().decode(Buffer.concat(parts));
  expect(text.length).toBe(fixtureBytes("A_nonstream.json").length + pad);
  expect(JSON.parse(text).usage.output_tokens).toBe(74);
  await expectCharged(e.gw, accountId, 100, CHARGE);
});

test("the upstream connection breaks mid-answer: a 502 in the caller's protocol, nothing charged", async () => {
  const anthropic = await e.gw.account(100);
  e.fake.enqueue({ kind: "drop", dropAfterBytes: 200 });
  const a = await post(anthropic.key, "/v1/messages", message);
  expect(a.status).toBe(502);
  expect(await a.json()).toMatchObject({ type: "error", error: { type: "api_error" } });
  await expectVoided(e.gw, anthropic.accountId, 100);

  const openai = await e.gw.account(100);
  e.fake.enqueue({ kind: "drop", dropAfterBytes: 200 });
  const c = await post(openai.key, "/v1/chat/completions", {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    messages: [{ role: "user", content: "Hi" }],
  });
  expect(c.status).toBe(502);
  const body = await errorOf(c);
  expect(body.error).toMatchObject({ code: "upstream_bad_response" });
  expect(body.error.message).toContain("nothing was charged");
  await expectVoided(e.gw, openai.accountId, 100);
});

test("the upstream connection breaks after part of a large answer was forwarded: the client's body ends in error, nothing charged", async () => {
  const { accountId, key } = await e.gw.account(100);
  const pad = WHOLE_ANSWER_BYTES * 2;
  e.fake.enqueue({
    kind: "drop",
    variant: "ok",
    pieceBytes: 8192,
    padBytes: pad,
    dropAfterBytes: WHOLE_ANSWER_BYTES + 20_000,
    cutWhenTold: true,
  });
  const r = await post(key, "/v1/messages", message);
  expect(r.status).toBe(200); // the head was on its way before the break
  e.fake.cut(); // only now: a busy gateway's fetch loses the bytes that reach it together with the reset
  expect(
    await r.text().then(
      () => "complete",
      () => "broken",
    ),
  ).toBe("broken");
  await expectVoided(e.gw, accountId, 100);
});

test("the client leaves while a JSON answer is being read: the upstream stops within 100 ms, the input estimate at most", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "ok", chunked: true, chunkDelayMs: 50 });
  expect(await leaveAfter(e.fake, 150, (signal) => post(key, "/v1/messages", message, signal))).toBeLessThan(100);
  const { calls, wallet } = await ledgerOf(e.gw, accountId);
  expect(calls.length).toBe(1);
  expect(calls[0]!.status).toBe("client_abort");
  expect(calls[0]!.cost).toBeGreaterThan(0);
  expect(calls[0]!.cost).toBeLessThanOrEqual(calls[0]!.held);
  expect(Number(wallet.held)).toBe(0);
});

describe("a 200 answer that states no usage (an upstream that leaves it out, or was asked to)", () => {
  // Not free output: the input estimate plus ceil(characters of generated content / 4) output tokens, never above
  // the hold. The content lengths below are counted by hand from the bodies.
  const text40 = "The capital of France is Paris, of cour."; // 40 characters
  const cases = [
    {
      path: "/v1/messages",
      model: "claude-opus-4-5",
      body: { model: "claude-opus-4-5", max_tokens: 1000, messages: [{ role: "user", content: "Hi" }] },
      answer: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-opus-4-5",
        stop_reason: "tool_use",
        content: [
          { type: "text", text: text40 },
          { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } },
        ],
      },
      chars: 40 + '{"city":"Paris"}'.length,
    },
    {
      path: "/v1/chat/completions",
      model: "gpt-5.2",
      body: { model: "gpt-5.2", max_completion_tokens: 1000, messages: [{ role: "user", content: "Hi" }] },
      answer: {
        id: "chatcmpl-1",
        object: "chat.completion",
        model: "gpt-5.2",
        choices: [{ index: 0, message: { role: "assistant", content: text40, refusal: null }, finish_reason: "stop" }],
      },
      chars: 40,
    },
    {
      path: "/v1/responses",
      model: "gpt-4.1",
      body: { model: "gpt-4.1", max_output_tokens: 1000, instructions: "Be brief.", input: "Hi" },
      answer: {
        id: "resp_1",
        object: "response",
        status: "completed",
        model: "gpt-4.1",
        instructions: "Be brief.",
        text: { format: { type: "text" } },
        output: [
          {
            type: "message",
            id: "msg_1",
            role: "assistant",
            content: [{ type: "output_text", text: text40, annotations: [] }],
          },
          { type: "function_call", id: "fc_1", call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
        ],
      },
      chars: 40 + 16,
    },
  ] as const;

  for (const c of cases) {
    test(`${c.path}: charged the input estimate and the output its content shows`, async () => {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue({ kind: "error", status: 200, body: JSON.stringify(c.answer) });
      const r = await post(key, c.path, c.body);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual(c.answer as any);
      const { calls } = await ledgerOf(e.gw, accountId);
      const rec = (await e.gw.ctx.db.get<any>(
        sql`select status, input_tokens, output_tokens, cost from usage_records where account_id = ${accountId}`,
      ))!;
      expect(rec.status).toBe("estimated");
      const output = Math.ceil(c.chars / 4);
      expect(Number(rec.output_tokens)).toBe(output);
      const P = PRICES[c.model];
      const charge = Number(rec.input_tokens) * P.input + output * P.output;
      expect(Number(rec.input_tokens)).toBeGreaterThan(0);
      await expectCharged(e.gw, accountId, 100, charge);
      expect(charge).toBeLessThanOrEqual(calls[0]!.held);
    });
  }
});

test("DeepSeek on /v1/responses (translated), a chat answer without usage: the same estimate, from the chat content", async () => {
  const { accountId, key } = await e.gw.account(100);
  const answer = {
    id: "c1",
    object: "chat.completion",
    model: "deepseek-test",
    choices: [{ index: 0, message: { role: "assistant", content: "x".repeat(41) }, finish_reason: "stop" }],
  };
  e.fake.enqueue({ kind: "error", status: 200, body: JSON.stringify(answer) });
  const r = await post(key, "/v1/responses", { model: "deepseek-test", max_output_tokens: 1000, input: "Hi" });
  expect(r.status).toBe(200);
  expect((await jsonOf<{ output: Array<{ content: Array<{ text: string }> }> }>(r)).output[0]!.content[0]!.text).toBe(
    "x".repeat(41),
  );
  await ledgerOf(e.gw, accountId);
  const rec = (await e.gw.ctx.db.get<any>(
    sql`select status, input_tokens, output_tokens from usage_records where account_id = ${accountId}`,
  ))!;
  expect(rec.status).toBe("estimated");
  expect(Number(rec.output_tokens)).toBe(11); // ceil(41 / 4)
  const P = PRICES["deepseek-test"];
  await expectCharged(e.gw, accountId, 100, Number(rec.input_tokens) * P.input + 11 * P.output);
});

test("max_credits caps the charge: an upstream stating far more usage than was held charges max_credits, and the record says why", async () => {
  const { accountId, key } = await e.gw.account(100);
  // A million prompt tokens the body never showed (a file the upstream fetched, say): 1.75 USD at gpt-5.2's price.
  const answer = {
    id: "c1",
    object: "chat.completion",
    model: "gpt-5.2",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1_000_000, completion_tokens: 10, total_tokens: 1_000_010 },
  };
  e.fake.enqueue({ kind: "error", status: 200, body: JSON.stringify(answer) });
  const r = await post(key, "/v1/chat/completions", {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    max_credits: 5,
    messages: [{ role: "user", content: "Hi" }],
  });
  expect(r.status).toBe(200);
  await expectCharged(e.gw, accountId, 100, 5 * 1000 * 1000);
  const rec = (await e.gw.ctx.db.get<any>(
    sql`select status, input_tokens, error from usage_records where account_id = ${accountId}`,
  ))!;
  expect([rec.status, Number(rec.input_tokens)]).toEqual(["ok", 1_000_000]);
  expect(rec.error).toContain("capped at max_credits");

  // Without max_credits the stated usage is what is charged (the formula), beyond the hold.
  const other = await e.gw.account(3000);
  e.fake.enqueue({ kind: "error", status: 200, body: JSON.stringify(answer) });
  await post(other.key, "/v1/chat/completions", {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    messages: [{ role: "user", content: "Hi" }],
  });
  const line = await expectCharged(
    e.gw,
    other.accountId,
    3000,
    1_000_000 * PRICES["gpt-5.2"].input + 10 * PRICES["gpt-5.2"].output,
  );
  expect(line.cost).toBeGreaterThan(line.held);
});
