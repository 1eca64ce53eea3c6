// Fees beyond tokens, end to end with the official SDKs: web searches the upstream ran and one-hour cache writes
// are charged at the catalog's prices (checked in the ledger, the prices written out here), recorded in the
// caller's usage; paid tools and tiers the gateway cannot meter are refused in the caller's protocol before
// anything is held or sent upstream.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { expectCharged, ledgerOf, MICROS, startEnv, stopEnv, type Env } from "./support";

// claude-opus-4-5 and gpt-5.1 in src/catalog/models.json, µcr per token; a web search is $10 per 1,000.
const OPUS = { input: 5000, output: 25000, cacheRead: 500, cacheWrite: 6250, cacheWrite1h: 10000 };
const GPT51 = { input: 1250, output: 10000, cacheRead: 125 };
const SEARCH = 10_000_000;
// The search fixtures (test/fakes/fixtures/synthesized): two searches each.
const A_SEARCH =
  2310 * OPUS.input + (1200 - 1000) * OPUS.cacheWrite + 1000 * OPUS.cacheWrite1h + 96 * OPUS.output + 2 * SEARCH;
const C_SEARCH = 5210 * GPT51.input + 96 * GPT51.output + 2 * SEARCH;

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
const webSearch = { type: "web_search_20250305" as const, name: "web_search" as const, max_uses: 3 };
const ask = {
  model: "claude-opus-4-5",
  max_tokens: 1024,
  messages: [{ role: "user" as const, content: "What is new in Bun 1.4?" }],
  tools: [webSearch],
};

async function usageRecord(key: string) {
  const res = await fetch(`${e.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  const { data } = (await res.json()) as { data: any[] };
  expect(data.length).toBe(1);
  return data[0];
}

describe("web searches and one-hour cache writes are charged", () => {
  test("Anthropic, non-streaming: tokens, one-hour writes at 2× input, and each search", async () => {
    const { accountId, key } = await e.gw.account(1000);
    e.fake.enqueue("search");
    const msg = await anthropic(key).messages.create(ask);
    expect(msg.content.filter((b) => b.type === "server_tool_use")).toHaveLength(2);
    expect(msg.usage.server_tool_use?.web_search_requests).toBe(2);
    await expectCharged(e.gw, accountId, 1000, A_SEARCH);
    expect((await usageRecord(key)).usage).toMatchObject({
      input_tokens: 2310,
      cache_write_tokens: 1200,
      cache_write_1h_tokens: 1000,
      web_search_calls: 2,
    });
  });

  test("Anthropic, streaming: the SDK assembles the message; the same charge", async () => {
    const { accountId, key } = await e.gw.account(1000);
    e.fake.enqueue("search");
    const final = await anthropic(key).messages.stream(ask).finalMessage();
    expect(final.content.at(-1)).toMatchObject({ type: "text" });
    await expectCharged(e.gw, accountId, 1000, A_SEARCH);
  });

  test("Responses, non-streaming and streaming: one web_search_call item per search", async () => {
    const body = {
      model: "gpt-5.1",
      input: "What is new in Bun 1.4?",
      max_output_tokens: 1000,
      tools: [{ type: "web_search" as const }],
    };
    const { accountId, key } = await e.gw.account(1000);
    e.fake.enqueue("search");
    const r = await openai(key).responses.create(body);
    expect(r.output.filter((i) => i.type === "web_search_call")).toHaveLength(2);
    await expectCharged(e.gw, accountId, 1000, C_SEARCH);
    expect((await usageRecord(key)).usage).toMatchObject({ input_tokens: 5210, web_search_calls: 2 });

    const other = await e.gw.account(1000);
    e.fake.enqueue("search");
    const final = await openai(other.key).responses.stream(body).finalResponse();
    expect(final.output_text).toContain("Bun 1.4");
    await expectCharged(e.gw, other.accountId, 1000, C_SEARCH);
  });

  test("Responses, a long non-streaming answer (its searches listed long before the end, only the end kept): each search charged", async () => {
    const body = {
      model: "gpt-5.1",
      input: "What is new in Bun 1.4?",
      max_output_tokens: 1000,
      tools: [{ type: "web_search" as const }],
    };
    for (const chunked of [true, false]) {
      const { accountId, key } = await e.gw.account(1000);
      e.fake.enqueue({ kind: "search", chunked, pieceBytes: 4096, padBytes: 100_000, padBeforeUsage: true });
      const r = await openai(key).responses.create(body);
      expect(r.output.filter((i) => i.type === "web_search_call")).toHaveLength(2);
      await expectCharged(e.gw, accountId, 1000, C_SEARCH);
      expect((await usageRecord(key)).usage).toMatchObject({ web_search_calls: 2 });
    }
  });

  test("the hold covers the request's search limit: max_credits between the token hold and the full hold is refused", async () => {
    const { key } = await e.gw.account(1000);
    const need = async (max_uses: number) => {
      const err = await anthropic(key)
        .messages.create({ ...ask, tools: [{ ...webSearch, max_uses }], max_credits: 0.000001 } as any)
        .catch((x) => x);
      return Number(/hold of up to ([\d.]+) credits/.exec(err.message)![1]);
    };
    // same body length, 7 searches held instead of 2: five searches more, each its fee (10 credits) and its results
    // as input (10,000 tokens at Opus 4.5's highest input rate, the one-hour cache write: 100 credits)
    expect((await need(7)) - (await need(2))).toBeCloseTo((5 * (SEARCH + 10_000 * OPUS.cacheWrite1h)) / 1_000_000, 6);
  });

  test("DeepSeek on /v1/responses (translated): hosted tools never reach chat completions, so Codex's web_search costs nothing extra", async () => {
    const { accountId, key } = await e.gw.account(1000);
    e.fake.reset();
    const r = await openai(key).responses.create({
      model: "deepseek-test",
      input: "Hi",
      max_output_tokens: 100,
      tools: [{ type: "web_search" }],
    });
    expect(r.status).toBe("completed");
    expect(JSON.parse(e.fake.requests.at(-1)!.body).tools).toBeUndefined();
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.status).toBe("ok");
    expect(calls[0]!.cost).toBeGreaterThan(0);
    expect(calls[0]!.cost).toBeLessThan(SEARCH);
  });
  test("GPT-6.2 Sol (no web-search price here): Codex's web_search is left out upstream, named in a header, not billed", async () => {
    const { accountId, key } = await e.gw.account(1000);
    e.fake.reset();
    const readFile = { type: "function" as const, name: "read_file", parameters: {}, strict: false };
    const { data, response } = await openai(key)
      .responses.create({
        model: "gpt-6.2-sol",
        input: "Hi",
        max_output_tokens: 100,
        tools: [{ type: "web_search" }, readFile],
      })
      .withResponse();
    expect(data.status).toBe("completed");
    expect(response.headers.get("x-switchyard-dropped-tools")).toBe("web_search");
    expect(JSON.parse(e.fake.requests.at(-1)!.body).tools).toEqual([readFile]);
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls.map((c) => c.status)).toEqual(["ok"]);
    expect(calls[0]!.cost).toBeLessThan(SEARCH);

    const forced: any = await openai(key)
      .responses.create({ model: "gpt-6.2-sol", input: "Hi", tools: [{ type: "web_search" }], tool_choice: "required" })
      .catch((x) => x);
    expect(forced).toBeInstanceOf(OpenAI.BadRequestError);
    expect(forced.param).toBe("tool_choice");
    expect(e.fake.requests).toHaveLength(1);
  });
});

describe("refused before anything is held or sent", () => {
  async function expectUntouched(accountId: string, credits: number) {
    expect(e.fake.requests).toHaveLength(0);
    const { calls, wallet } = await ledgerOf(e.gw, accountId);
    expect(calls).toHaveLength(0);
    expect(Number(wallet.balance)).toBe(credits * MICROS);
  }

  test("Anthropic code execution: a 400 in Anthropic's shape naming the tool", async () => {
    const { accountId, key } = await e.gw.account(1000);
    e.fake.reset();
    const err: any = await anthropic(key)
      .messages.create({ ...ask, tools: [{ type: "code_execution_20250825", name: "code_execution" }] } as any)
      .catch((x) => x);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error.error.type).toBe("invalid_request_error");
    expect(err.message).toContain("code_execution_20250825");
    await expectUntouched(accountId, 1000);
  });

  test("Responses file search and chat priority tier: a 400 unsupported_parameter in OpenAI's shape", async () => {
    const { accountId, key } = await e.gw.account(1000);
    e.fake.reset();
    const fileSearch: any = await openai(key)
      .responses.create({
        model: "gpt-5.1",
        input: "Find it",
        tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }],
      })
      .catch((x) => x);
    expect(fileSearch).toBeInstanceOf(OpenAI.BadRequestError);
    expect(fileSearch.code).toBe("unsupported_parameter");
    expect(fileSearch.param).toBe("tools");
    const priority: any = await openai(key)
      .chat.completions.create({
        model: "gpt-5.2",
        messages: [{ role: "user", content: "Hi" }],
        service_tier: "priority",
      })
      .catch((x) => x);
    expect(priority).toBeInstanceOf(OpenAI.BadRequestError);
    expect(priority.param).toBe("service_tier");
    expect(priority.message).toContain("priority");
    await expectUntouched(accountId, 1000);
  });
});
