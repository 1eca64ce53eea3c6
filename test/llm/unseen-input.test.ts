// The hold's input part when the upstream bills input the body does not show (src/llm/protocols/unseen-input.ts):
// a document or file (by reference or inline), an MCP server or web_fetch hold the context window; an image by reference
// 8,000 tokens; an inline (base64 or data: URL) one nothing beyond its bytes. And the estimate from the body
// itself: UTF-8 bytes / 3, without the max_credits field (removed before the body goes upstream).
import { describe, expect, test } from "bun:test";
import { loadCatalog } from "../../src/catalog-loader";
import { capAtMaxCredits, estimateVerdict, planHold } from "../../src/llm/meter";
import { protocols } from "../../src/llm/protocols/index";
import { NO_PAID_TOOLS } from "../../src/llm/protocols/paid-tools";
import { requestBodyOf } from "../../src/llm/body";

const catalog = loadCatalog().llm;
const opus = catalog.get("claude-opus-4-5")!;
const gpt41 = catalog.get("gpt-4.1")!;
const gpt52 = catalog.get("gpt-5.2")!;
const IMAGE = 8_000;

/**
 * The hold's input tokens for `body`, and what the same body's bytes alone give. The body read from its bytes
 * (request-fields.ts: its walks skipped when the bytes mention nothing they look for) is held the same.
 */
function inputOf(proto: keyof typeof protocols, body: Record<string, unknown>, model = opus) {
  const raw = JSON.stringify(body);
  const held = planHold(protocols[proto], body, Buffer.byteLength(raw), model, NO_PAID_TOOLS).inputTokens;
  const read = requestBodyOf(new Uint8Array(Buffer.from(raw)), 0);
  expect(planHold(protocols[proto], read, Buffer.byteLength(raw), model, NO_PAID_TOOLS).inputTokens).toBe(held);
  return { held, fromBytes: Math.ceil(Buffer.byteLength(raw) / 3) };
}

const user = (content: unknown) => ({ messages: [{ role: "user", content }] });

describe("Anthropic Messages", () => {
  const anthropic = (content: unknown, extra: object = {}) =>
    inputOf("anthropic", { model: "claude-opus-4-5", max_tokens: 100, ...user(content), ...extra });

  test("a PDF by URL, by Files API id or inline: the context window; a plain-text document only its bytes", () => {
    expect(
      anthropic([
        { type: "document", source: { type: "url", url: "https://example.com/big.pdf" } },
        { type: "text", text: "Summarise" },
      ]).held,
    ).toBe(opus.context_window!);
    expect(anthropic([{ type: "document", source: { type: "file", file_id: "file_011" } }]).held).toBe(
      opus.context_window!,
    );
    expect(
      anthropic([{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQ=" } }])
        .held,
    ).toBe(opus.context_window!);
    const text = anthropic([
      { type: "document", source: { type: "text", media_type: "text/plain", data: "The grass is green." } },
    ]);
    expect(text.held).toBe(text.fromBytes);
  });

  test("images by URL: 8,000 tokens each, also inside a tool result; a base64 image only its bytes", () => {
    const url = { type: "image", source: { type: "url", url: "https://example.com/a.png" } };
    const a = anthropic([url, url]);
    expect(a.held).toBe(a.fromBytes + 2 * IMAGE);
    const nested = anthropic([{ type: "tool_result", tool_use_id: "t1", content: [url] }]);
    expect(nested.held).toBe(nested.fromBytes + IMAGE);
    const inline = anthropic([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
    ]);
    expect(inline.held).toBe(inline.fromBytes);
  });

  test("an MCP server or the web_fetch tool: the context window; other tools and text that mentions a source: nothing", () => {
    expect(anthropic("hi", { mcp_servers: [{ type: "url", url: "https://mcp.example.com", name: "x" }] }).held).toBe(
      opus.context_window!,
    );
    expect(anthropic("hi", { tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] }).held).toBe(
      opus.context_window!,
    );
    const plain = anthropic('What does {"source": {"type": "url"}} mean?', {
      tools: [{ name: "get", input_schema: { type: "object", properties: { url: { type: "string" } } } }],
    });
    expect(plain.held).toBe(plain.fromBytes);
  });
});

describe("OpenAI Responses", () => {
  const responses = (input: unknown, extra: object = {}) =>
    inputOf("responses", { model: "gpt-4.1", max_output_tokens: 100, input, ...extra }, gpt41);
  const message = (content: unknown[]) => [{ role: "user", content }];

  test("a file by id, by URL or inline: the context window (a PDF is billed per page, far beyond its bytes)", () => {
    expect(responses(message([{ type: "input_file", file_id: "file-abc" }])).held).toBe(gpt41.context_window!);
    expect(responses(message([{ type: "input_file", file_url: "https://example.com/r.pdf" }])).held).toBe(
      gpt41.context_window!,
    );
    expect(
      responses(message([{ type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" }]))
        .held,
    ).toBe(gpt41.context_window!);
  });

  test("images by URL or file id: 8,000 tokens each, also in a function call's output; a data: URL only its bytes", () => {
    const r = responses(
      message([
        { type: "input_image", image_url: "https://example.com/a.png" },
        { type: "input_image", file_id: "file-img" },
      ]),
    );
    expect(r.held).toBe(r.fromBytes + 2 * IMAGE);
    const out = responses([
      {
        type: "function_call_output",
        call_id: "c1",
        output: [{ type: "input_image", image_url: "https://example.com/s.png" }],
      },
    ]);
    expect(out.held).toBe(out.fromBytes + IMAGE);
    const data = responses(message([{ type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" }]));
    expect(data.held).toBe(data.fromBytes);
  });

  test("a remote MCP tool: the context window", () => {
    expect(
      responses("hi", { tools: [{ type: "mcp", server_label: "x", server_url: "https://mcp.example.com" }] }).held,
    ).toBe(gpt41.context_window!);
  });
});

describe("Chat Completions", () => {
  const chat = (content: unknown) =>
    inputOf("chat", { model: "gpt-5.2", max_completion_tokens: 100, ...user(content) }, gpt52);

  test("image_url parts with a URL: 8,000 tokens each; data: URLs only their bytes; a file by id or inline: the context window", () => {
    const two = chat([
      { type: "text", text: "compare" },
      { type: "image_url", image_url: { url: "https://example.com/a.png" } },
      { type: "image_url", image_url: { url: "https://example.com/b.png" } },
    ]);
    expect(two.held).toBe(two.fromBytes + 2 * IMAGE);
    const data = chat([{ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }]);
    expect(data.held).toBe(data.fromBytes);
    expect(chat([{ type: "file", file: { file_id: "file-abc" } }]).held).toBe(gpt52.context_window!);
    expect(
      chat([{ type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } }]).held,
    ).toBe(gpt52.context_window!);
  });
});

describe("the estimate from the body", () => {
  test("UTF-8 bytes / 3: CJK text holds about a token per character (three bytes each), not a third of one", () => {
    const text = "東京の天気を教えてください".repeat(30); // 390 characters, 1,170 bytes
    const body = { model: "gpt-5.2", max_completion_tokens: 100, ...user(text) };
    const raw = JSON.stringify(body);
    expect(planHold(protocols.chat, body, Buffer.byteLength(raw), gpt52, NO_PAID_TOOLS).inputTokens).toBe(
      Math.ceil(Buffer.byteLength(raw) / 3),
    );
    expect(planHold(protocols.chat, body, Buffer.byteLength(raw), gpt52, NO_PAID_TOOLS).inputTokens).toBeGreaterThan(
      390,
    );
  });

  test("the max_credits field is not input: the hold quoted in a 402 is enough to resend with", () => {
    const base = { model: "gpt-5.2", max_completion_tokens: 100, ...user("Hi") };
    const hold = (b: object) =>
      planHold(protocols.chat, b, Buffer.byteLength(JSON.stringify(b)), gpt52, NO_PAID_TOOLS).amount;
    expect(hold({ ...base, max_credits: 0 })).toBe(hold(base));
    expect(hold({ ...base, max_credits: "12.345678" })).toBe(hold(base));
  });
});

test("max_credits caps the charge when the upstream states more than was held", () => {
  const body = { model: "gpt-5.2", max_completion_tokens: 100, ...user("Hi") };
  const plan = {
    ...planHold(protocols.chat, body, Buffer.byteLength(JSON.stringify(body)), gpt52, NO_PAID_TOOLS),
    cap: 5_000_000,
  };
  const usage = { input: 1_000_000, output: 10, cacheRead: 0, cacheWrite: 0 };
  const v = capAtMaxCredits({ outcome: "ok", charge: 1_750_140_000, usage }, plan);
  expect(v).toMatchObject({ outcome: "ok", charge: 5_000_000, usage });
  expect(v.error).toContain("capped at max_credits");
  expect(capAtMaxCredits({ outcome: "ok", charge: 4_000_000, usage }, plan).charge).toBe(4_000_000);
  expect(capAtMaxCredits({ outcome: "failed", charge: null, usage: null }, plan).charge).toBeNull();
  expect(capAtMaxCredits({ outcome: "ok", charge: 9_000_000, usage }, { ...plan, cap: undefined }).charge).toBe(
    9_000_000,
  );
});

describe("references written with escapes", () => {
  // The upstream parses the body as sent: an escaped key is the same key to it, and the walk sees parsed keys.
  test("keys written with escapes are still found (the body goes upstream as sent)", () => {
    const pdf = '{"type":"document","\\u0073ource":{"type":"url","url":"https://example.com/300-pages.pdf"}}';
    const anthropicRaw = `{"model":"claude-opus-4-5","max_tokens":100,"messages":[{"role":"user","content":[${pdf}]}]}`;
    expect(
      planHold(protocols.anthropic, JSON.parse(anthropicRaw), Buffer.byteLength(anthropicRaw), opus, NO_PAID_TOOLS)
        .inputTokens,
    ).toBe(opus.context_window!);
    const responsesRaw =
      '{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_file","file\\u005furl":"https://example.com/r.pdf"}]}]}';
    expect(
      planHold(protocols.responses, JSON.parse(responsesRaw), Buffer.byteLength(responsesRaw), gpt41, NO_PAID_TOOLS)
        .inputTokens,
    ).toBe(gpt41.context_window!);
    const chatRaw =
      '{"model":"gpt-5.2","messages":[{"role":"user","content":[{"type":"image\\u005furl","image\\u005furl":{"url":"https://example.com/a.png"}}]}]}';
    expect(
      planHold(protocols.chat, JSON.parse(chatRaw), Buffer.byteLength(chatRaw), gpt52, NO_PAID_TOOLS).inputTokens,
    ).toBe(Math.ceil(Buffer.byteLength(chatRaw) / 3) + IMAGE);
  });

  test("Responses: an item_reference (an item stored upstream) holds the context window", () => {
    const body = {
      model: "gpt-4.1",
      input: [
        { type: "item_reference", id: "msg_abc" },
        { role: "user", content: "and?" },
      ],
    };
    expect(
      planHold(protocols.responses, body, Buffer.byteLength(JSON.stringify(body)), gpt41, NO_PAID_TOOLS).inputTokens,
    ).toBe(gpt41.context_window!);
  });
});

test("embeddings given as token ids: one token per id, where the bytes would count two bytes per token", () => {
  const small = catalog.get("text-embedding-3-small")!;
  const ids = Array.from({ length: 30_000 }, (_, i) => i % 10);
  for (const input of [ids, [ids.slice(0, 10_000), ids.slice(10_000)]]) {
    const body = { model: "text-embedding-3-small", input };
    const plan = planHold(protocols.embeddings, body, Buffer.byteLength(JSON.stringify(body)), small, NO_PAID_TOOLS);
    expect(plan.inputTokens).toBe(30_000);
  }
  const text = { model: "text-embedding-3-small", input: ["some text", "more"] };
  expect(
    planHold(protocols.embeddings, text, Buffer.byteLength(JSON.stringify(text)), small, NO_PAID_TOOLS).inputTokens,
  ).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(text)) / 3));
});

test("an answer that states no usage is charged the input estimate, not the context window held for a document", () => {
  const gemini = catalog.get("gemini-2.5-pro")!; // $1.25 / $10; over 200k tokens $2.50 / $15
  const body = {
    model: "gemini-2.5-pro",
    max_completion_tokens: 100,
    messages: [
      { role: "user", content: [{ type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=" } }] },
    ],
  };
  const bytes = Buffer.byteLength(JSON.stringify(body));
  const plan = planHold(protocols.chat, body, bytes, gemini, NO_PAID_TOOLS);
  expect(plan.inputTokens).toBe(gemini.context_window!); // held for
  const aborted = estimateVerdict({ usage: null, outputCharsSoFar: 40 }, gemini, plan, "client_abort");
  expect(aborted.charge).toBe(Math.ceil(bytes / 3) * 1250 + 10 * 10_000); // charged: the estimate, ordinary prices
});
