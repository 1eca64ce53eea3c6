// The translation matrix's pieces: each LLM endpoint's official SDK making a plain call, a streamed call and a
// tool round trip; what the fake upstream states as usage for each native protocol's answers (from the fixtures,
// written out here); and the charge those numbers make at the catalog's prices, computed from models.json here,
// not by the gateway's code.
import { expect } from "bun:test";
import Anthropic1 from "@anthropic-ai/sdk";
import Anthropic0 from "anthropic-sdk-0";
import OpenAI from "openai";
import models from "../../../src/catalog/models.json";
import testModels from "../../support/deepseek-catalog.json";

export type Endpoint = "/v1/messages" | "/v1/responses" | "/v1/chat/completions";
export const ENDPOINTS: Endpoint[] = ["/v1/messages", "/v1/responses", "/v1/chat/completions"];

export interface Entry {
  id: string;
  type: string;
  provider: string;
  endpoint: string;
  upstream_model: string;
  pricing: { input: number; output?: number; cache_read?: number; cache_write?: number };
  status?: string;
}
/** Every LLM a call can reach: the built-in ones on sale (retired ones answer 410) and the tests' DeepSeek entries. */
export const LLMS = [...(models as Entry[]), ...(testModels as Entry[])].filter(
  (m) => m.type === "llm" && m.status !== "retired",
);

/** The protocol the model's provider speaks (DeepSeek: chat, whatever its catalog endpoint). */
export const nativeOf = (m: Entry): Endpoint =>
  m.provider === "deepseek" ? "/v1/chat/completions" : (m.endpoint as Endpoint);

/** Usage the fake upstream states, by native protocol, answer variant and form (fixtures; synthesized/README.md). */
interface Stated {
  input: number; // uncached input
  cacheRead: number;
  cacheWrite: number;
  output: number;
}
const u = (input: number, cacheRead: number, cacheWrite: number, output: number): Stated => ({
  input,
  cacheRead,
  cacheWrite,
  output,
});
export const STATED: Record<Endpoint, Record<"ok" | "tool" | "reasoning", { json: Stated; stream: Stated }>> = {
  // A_nonstream.json (a tool call, cache read), A_stream_text.sse (cache write), A_stream_tool.sse
  "/v1/messages": {
    ok: { json: u(38, 2113, 0, 74), stream: u(21, 0, 1450, 12) },
    tool: { json: u(38, 2113, 0, 74), stream: u(472, 0, 0, 89) },
    reasoning: { json: u(40, 0, 0, 120), stream: u(40, 0, 0, 120) },
  },
  // chat prompt_tokens include the cached ones: B_nonstream (1543, 1408 cached), B_stream (19), B_*_tool (82)
  "/v1/chat/completions": {
    ok: { json: u(1543 - 1408, 1408, 0, 10), stream: u(19, 0, 0, 7) },
    tool: { json: u(82, 0, 0, 17), stream: u(82, 0, 0, 17) },
    reasoning: { json: u(120 - 64, 64, 0, 85), stream: u(120 - 64, 64, 0, 85) },
  },
  // C_nonstream / C_stream (1320, 1152 cached), C_*_tool (310)
  "/v1/responses": {
    ok: { json: u(1320 - 1152, 1152, 0, 8), stream: u(1320 - 1152, 1152, 0, 8) },
    tool: { json: u(310, 0, 0, 19), stream: u(310, 0, 0, 19) },
    reasoning: { json: u(200, 0, 0, 150), stream: u(200, 0, 0, 150) },
  },
};

/** µcr per token from USD per million tokens; absent cache prices bill at the input price. */
const perToken = (usdPerMillion: number) => Math.round(usdPerMillion * 1000);

/** The native formula on what the upstream stated, at the catalog's prices. */
export function chargeOf(m: Entry, s: Stated): number {
  const p = m.pricing;
  return (
    s.input * perToken(p.input) +
    s.cacheRead * perToken(p.cache_read ?? p.input) +
    s.cacheWrite * perToken(p.cache_write ?? p.input) +
    s.output * perToken(p.output!)
  );
}

/** The tool call id the fake's tool answers carry, by native protocol and form: kept across the round trip. */
export const NATIVE_CALL_ID: Record<Endpoint, { json: string; stream: string }> = {
  "/v1/messages": { json: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", stream: "toolu_01VtzEc4Rbq3qX4wKqf1Cq8m" },
  "/v1/chat/completions": { json: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy", stream: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy" },
  "/v1/responses": { json: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy", stream: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy" },
};

/** What a client learned from one call, in protocol-neutral terms. */
export interface Got {
  text: string;
  toolCall?: { id: string; name: string; arguments: unknown };
  /** the messages/items to send back as the assistant's turn */
  turn: unknown;
}

export interface Client {
  name: string;
  endpoint: Endpoint;
  call(model: string, opts: { stream: boolean; tools?: boolean; history?: unknown[] }): Promise<Got>;
  /** the history after a tool call answered with `result` */
  withResult(first: unknown[], got: Got, result: string): unknown[];
  firstTurn(): unknown[];
}

const WEATHER = { type: "object", properties: { location: { type: "string" } }, required: ["location"] };

function anthropicClient(name: string, make: () => Anthropic1): Client {
  return {
    name,
    endpoint: "/v1/messages",
    firstTurn: () => [{ role: "user", content: "What's the weather in Paris?" }],
    async call(model, { stream, tools, history }) {
      const c = make();
      const req: any = { model, max_tokens: 300, messages: history ?? this.firstTurn() };
      if (tools) req.tools = [{ name: "get_weather", description: "Weather", input_schema: WEATHER }];
      const msg: any = stream ? await c.messages.stream(req).finalMessage() : await c.messages.create(req);
      expect(msg.type).toBe("message");
      const text = msg.content
        .filter((b: any) => b.type === "text")
        .map((b: any) => b.text)
        .join("");
      const tu = msg.content.find((b: any) => b.type === "tool_use");
      return {
        text,
        toolCall: tu && { id: tu.id, name: tu.name, arguments: tu.input },
        turn: { role: "assistant", content: msg.content },
      };
    },
    withResult(first, got, result) {
      return [
        ...first,
        got.turn,
        { role: "user", content: [{ type: "tool_result", tool_use_id: got.toolCall!.id, content: result }] },
      ];
    },
  };
}

function responsesClient(make: () => OpenAI): Client {
  return {
    name: "openai responses",
    endpoint: "/v1/responses",
    firstTurn: () => [{ role: "user", content: "What's the weather in Paris?" }],
    async call(model, { stream, tools, history }) {
      const c = make();
      const req: any = { model, max_output_tokens: 300, input: history ?? this.firstTurn() };
      if (tools)
        req.tools = [
          { type: "function", name: "get_weather", description: "Weather", parameters: WEATHER, strict: false },
        ];
      const r: any = stream ? await c.responses.stream(req).finalResponse() : await c.responses.create(req);
      expect(r.object).toBe("response");
      const fc = r.output.find((i: any) => i.type === "function_call");
      return {
        text: r.output_text ?? "",
        toolCall: fc && { id: fc.call_id, name: fc.name, arguments: JSON.parse(fc.arguments) },
        turn: r.output,
      };
    },
    withResult(first, got, result) {
      return [
        ...first,
        ...(got.turn as unknown[]),
        { type: "function_call_output", call_id: got.toolCall!.id, output: result },
      ];
    },
  };
}

function chatClient(make: () => OpenAI): Client {
  return {
    name: "openai chat",
    endpoint: "/v1/chat/completions",
    firstTurn: () => [{ role: "user", content: "What's the weather in Paris?" }],
    async call(model, { stream, tools, history }) {
      const c = make();
      const req: any = { model, max_completion_tokens: 300, messages: history ?? this.firstTurn() };
      if (tools)
        req.tools = [
          { type: "function", function: { name: "get_weather", description: "Weather", parameters: WEATHER } },
        ];
      const r: any = stream
        ? await c.chat.completions.stream({ ...req, stream_options: { include_usage: true } }).finalChatCompletion()
        : await c.chat.completions.create(req);
      expect(r.object).toBe("chat.completion");
      const m = r.choices[0].message;
      const tc = m.tool_calls?.[0];
      return {
        text: m.content ?? "",
        toolCall: tc && { id: tc.id, name: tc.function.name, arguments: JSON.parse(tc.function.arguments) },
        turn: m,
      };
    },
    withResult(first, got, result) {
      const m: any = got.turn;
      return [
        ...first,
        { role: "assistant", content: m.content, tool_calls: m.tool_calls },
        { role: "tool", tool_call_id: got.toolCall!.id, content: result },
      ];
    },
  };
}

/** The clients of an endpoint: Anthropic's SDK 1.x and 0.x on /v1/messages, openai's on the other two. */
export function clientsFor(endpoint: Endpoint, baseUrl: string, key: string): Client[] {
  const opts = { apiKey: key, maxRetries: 0 };
  if (endpoint === "/v1/messages")
    return [
      anthropicClient("@anthropic-ai/sdk 1.x", () => new Anthropic1({ ...opts, baseURL: baseUrl })),
      anthropicClient(
        "@anthropic-ai/sdk 0.x",
        () => new Anthropic0({ ...opts, baseURL: baseUrl }) as unknown as Anthropic1,
      ),
    ];
  const openai = () => new OpenAI({ ...opts, baseURL: baseUrl + "/v1" });
  return [endpoint === "/v1/responses" ? responsesClient(openai) : chatClient(openai)];
}
