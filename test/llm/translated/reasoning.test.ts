// Reasoning across protocols, through the gateway with the official SDKs against the fake upstream: a model's
// thinking comes back in the client protocol's own fields (chat reasoning_content, a Responses reasoning item, an
// Anthropic thinking block), its proof (Claude's signature, OpenAI's encrypted_content) goes back only to the
// provider that made it, and a history holding another provider's reasoning is forwarded without it. Charged the
// native formula on the upstream's usage.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { expectCharged, startEnv, stopEnv, type Env } from "../support";
import { chargeOf, LLMS, STATED } from "./clients";
import { openOpaque, originOf, sealOpaque } from "../../../src/llm/translate/ir";
import { withoutForeignReasoning } from "../../../src/llm/foreign-reasoning";

// test/fakes/fixtures/synthesized/*_thinking / *_reasoning
const THOUGHT = "The user asks about the weather in Paris. A short answer will do.";
const CLAUDE_SIGNATURE = "EqQBCkgIBxABGAIqQKj7Yc3ThInKiNgSiGnAtUrE0nLy6Ft5h1sG2fWcQm";
const OPENAI_ENCRYPTED = "gAAAAABpReasoningEncryptedContent0123456789abcdefXyZ";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));
const model = (id: string) => LLMS.find((m) => m.id === id)!;
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
const ask = "What's the weather in Paris?";
const lastUpstream = () => JSON.parse(e.fake.requests.at(-1)!.body);

test("Claude's thinking on /v1/chat/completions: reasoning_content (JSON and streamed); charged the Anthropic formula", async () => {
  for (const stream of [false, true]) {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue("reasoning");
    const req = {
      model: "claude-sonnet-4-5",
      max_completion_tokens: 2000,
      reasoning_effort: "low" as const,
      messages: [{ role: "user" as const, content: ask }],
    };
    let content = "";
    let reasoning = "";
    if (stream) {
      // The SDK's accumulator keeps only the fields it knows: the deltas are read as they come.
      for await (const c of await openai(key).chat.completions.create({ ...req, stream: true })) {
        const d: any = c.choices[0]?.delta ?? {};
        content += d.content ?? "";
        reasoning += d.reasoning_content ?? "";
      }
    } else {
      const m: any = (await openai(key).chat.completions.create(req)).choices[0]!.message;
      [content, reasoning] = [m.content, m.reasoning_content];
    }
    expect(content).toContain("sunny");
    expect(reasoning).toBe(THOUGHT);
    expect(lastUpstream().thinking).toMatchObject({ type: "enabled" });
    await expectCharged(
      e.gw,
      accountId,
      100,
      chargeOf(model("claude-sonnet-4-5"), STATED["/v1/messages"].reasoning[stream ? "stream" : "json"]),
    );
  }
});

test("Claude's thinking on /v1/responses: a reasoning item; sent back, Anthropic gets its own signature again", async () => {
  const { key } = await e.gw.account(100);
  const client = openai(key);
  for (const stream of [false, true]) {
    e.fake.enqueue("reasoning");
    const req = {
      model: "claude-sonnet-4-5",
      max_output_tokens: 2000,
      reasoning: { effort: "low" as const },
      input: ask,
    };
    const r: any = stream ? await client.responses.stream(req).finalResponse() : await client.responses.create(req);
    const item = r.output.find((i: any) => i.type === "reasoning");
    expect(JSON.stringify(item)).toContain(THOUGHT);
    expect(r.output_text).toContain("sunny");

    e.fake.enqueue("ok");
    await client.responses.create({
      model: "claude-sonnet-4-5",
      max_output_tokens: 2000,
      input: [{ role: "user", content: ask }, ...r.output, { role: "user", content: "And tomorrow?" }],
    });
    const thinking = lastUpstream()
      .messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .find((b: any) => b.type === "thinking");
    expect(thinking).toMatchObject({ thinking: THOUGHT, signature: CLAUDE_SIGNATURE });

    // The same history moved to a GPT model (passed through): Claude's reasoning item is not OpenAI's to read.
    e.fake.enqueue("ok");
    await client.responses.create({
      model: "gpt-5",
      max_output_tokens: 2000,
      input: [{ role: "user", content: ask }, ...r.output, { role: "user", content: "And tomorrow?" }],
    });
    expect(e.fake.requests.at(-1)!.body).not.toContain(CLAUDE_SIGNATURE);
    expect(lastUpstream().input.some((i: any) => i.type === "reasoning")).toBe(false);
  }
});

test("Claude's signature is sealed with the model that made it: back to that model only, not to another Claude", async () => {
  const { key } = await e.gw.account(100);
  const client = openai(key);
  e.fake.enqueue("reasoning");
  const r: any = await client.responses.create({
    model: "claude-sonnet-4-5",
    max_output_tokens: 2000,
    reasoning: { effort: "low" },
    input: ask,
  });
  const item = r.output.find((i: any) => i.type === "reasoning");
  const opened = openOpaque(item.encrypted_content)!;
  expect(opened.origin).toBe(originOf({ provider: "anthropic", model: model("claude-sonnet-4-5").upstream_model }));
  const history = [{ role: "user", content: ask }, ...r.output, { role: "user", content: "And tomorrow?" }];
  const thinkingSent = () =>
    lastUpstream()
      .messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: any) => b.type === "thinking");

  e.fake.enqueue("ok");
  await client.responses.create({ model: "claude-haiku-4-5", max_output_tokens: 2000, input: history });
  expect(thinkingSent()).toEqual([]);
  expect(e.fake.requests.at(-1)!.body).not.toContain(CLAUDE_SIGNATURE);

  e.fake.enqueue("ok");
  await client.responses.create({ model: "claude-sonnet-4-5", max_output_tokens: 2000, input: history });
  expect(thinkingSent()).toMatchObject([{ signature: CLAUDE_SIGNATURE }]);
});

test("on a native Responses call, reasoning sealed for one model is unsealed for that model and dropped for another", () => {
  const sealed = (m: string) => ({
    type: "reasoning",
    summary: [],
    encrypted_content: sealOpaque(originOf({ provider: "openai", model: m }), "gAAAA-enc"),
  });
  const body = { model: "gpt-5", input: [sealed("gpt-5"), sealed("gpt-5.1"), { role: "user", content: "hi" }] };
  const out = withoutForeignReasoning("responses", body, "openai", "gpt-5")!;
  expect(out.input).toEqual([
    { type: "reasoning", summary: [], encrypted_content: "gAAAA-enc" },
    { role: "user", content: "hi" },
  ]);
});

test("a history with Claude's thinking sent to another provider goes without it (no signature, no thought)", async () => {
  const { key } = await e.gw.account(100);
  const history = [
    { role: "user" as const, content: ask },
    {
      role: "assistant" as const,
      content: [
        { type: "thinking" as const, thinking: THOUGHT, signature: CLAUDE_SIGNATURE },
        { type: "text" as const, text: "Sunny." },
      ],
    },
    { role: "user" as const, content: "And tomorrow?" },
  ];
  for (const id of ["gpt-4.1", "gemini-2.5-flash", "deepseek-test-reasoner", "grok-4.20"]) {
    e.fake.enqueue("ok");
    await anthropic(key).messages.create({ model: id, max_tokens: 200, messages: history });
    const sent = e.fake.requests.at(-1)!.body;
    expect(sent).not.toContain(CLAUDE_SIGNATURE);
    expect(sent).not.toContain(THOUGHT);
    expect(sent).toContain("Sunny.");
  }
});

test("OpenAI's encrypted reasoning reaches an Anthropic client as a thinking block and goes back only to OpenAI, even when the conversation moves to Claude (passed through)", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue("reasoning");
  const msg: any = await anthropic(key).messages.create({
    model: "gpt-5",
    max_tokens: 2000,
    thinking: { type: "enabled", budget_tokens: 1024 },
    messages: [{ role: "user", content: ask }],
  });
  const block = msg.content.find((b: any) => b.type === "thinking");
  expect(block.thinking).toBe(THOUGHT);
  expect(block.signature).not.toBe(OPENAI_ENCRYPTED); // sealed with its origin, not passed off as a Claude signature
  await expectCharged(e.gw, accountId, 100, chargeOf(model("gpt-5"), STATED["/v1/responses"].reasoning.json));

  const next = [
    { role: "user" as const, content: ask },
    { role: "assistant" as const, content: msg.content },
    { role: "user" as const, content: "And tomorrow?" },
  ];
  e.fake.enqueue("ok");
  await anthropic(key).messages.create({ model: "gpt-5", max_tokens: 2000, messages: next });
  expect(e.fake.requests.at(-1)!.body).toContain(OPENAI_ENCRYPTED);
  e.fake.enqueue("ok");
  await anthropic(key).messages.create({ model: "claude-sonnet-4-5", max_tokens: 2000, messages: next });
  expect(e.fake.requests.at(-1)!.body).not.toContain(OPENAI_ENCRYPTED);
});

test("DeepSeek's reasoning_content streams to an Anthropic client as thinking; charged the chat formula", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue("reasoning");
  const msg: any = await anthropic(key)
    .messages.stream({ model: "deepseek-test-reasoner", max_tokens: 2000, messages: [{ role: "user", content: ask }] })
    .finalMessage();
  expect(msg.content[0]).toMatchObject({ type: "thinking", thinking: THOUGHT });
  expect(msg.content.find((b: any) => b.type === "text").text).toContain("sunny");
  expect(msg.usage.output_tokens).toBe(85);
  await expectCharged(
    e.gw,
    accountId,
    100,
    chargeOf(model("deepseek-test-reasoner"), STATED["/v1/chat/completions"].reasoning.stream),
  );

  // The conversation moves to Claude (passed through): DeepSeek's thought, which Anthropic did not sign, stays out;
  // back on DeepSeek it goes with the turn, as its reasoner requires.
  const next = [
    { role: "user" as const, content: ask },
    { role: "assistant" as const, content: msg.content },
    { role: "user" as const, content: "And tomorrow?" },
  ];
  e.fake.enqueue("ok");
  await anthropic(key).messages.create({ model: "claude-haiku-4-5", max_tokens: 200, messages: next });
  expect(e.fake.requests.at(-1)!.body).not.toContain(THOUGHT);
  expect(e.fake.requests.at(-1)!.body).toContain("sunny");
  e.fake.enqueue("ok");
  await anthropic(key).messages.create({ model: "deepseek-test-reasoner", max_tokens: 200, messages: next });
  expect(lastUpstream().messages.find((m: any) => m.role === "assistant")).toMatchObject({
    reasoning_content: THOUGHT,
  });
});

test("DeepSeek's reasoning_content reaches a Responses client (Codex) as a reasoning item that takes it back to DeepSeek, JSON and streamed", async () => {
  for (const stream of [false, true]) {
    const { key } = await e.gw.account(100);
    e.fake.enqueue("reasoning");
    const req = { model: "deepseek-test-reasoner", max_output_tokens: 2000, input: ask };
    const r = stream
      ? await openai(key).responses.stream(req).finalResponse()
      : await openai(key).responses.create(req);
    const item: any = r.output.find((i) => i.type === "reasoning");
    expect(item.summary[0].text).toBe(THOUGHT);
    // Codex sends its history back as it was given, reasoning items included: DeepSeek gets its reasoning back.
    e.fake.enqueue("ok");
    await openai(key).responses.create({
      ...req,
      input: [{ role: "user", content: ask }, ...(r.output as any[]), { role: "user", content: "And tomorrow?" }],
    });
    expect(lastUpstream().messages.find((m: any) => m.role === "assistant")).toMatchObject({
      reasoning_content: THOUGHT,
    });
  }
});
