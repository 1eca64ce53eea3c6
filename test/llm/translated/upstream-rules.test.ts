// Per-model upstream rules (providers.ts dialectFor): the dialect is the provider's, but some models refuse fields
// their provider's protocol allows. A translated request carrying them is written without them rather than sent to
// an upstream 400: OpenAI's reasoning models take no temperature/top_p, models that do not reason take no reasoning
// fields, and xAI's grok-4 family takes no reasoning effort.
import { describe, expect, test } from "bun:test";
import type { LlmModel } from "../../../src/catalog/model";
import { buildProviders } from "../../../src/llm/providers";
import { prepareTranslation } from "../../../src/llm/translated";

const providers = buildProviders({});

function llm(
  id: string,
  provider: string,
  endpoint: LlmModel["endpoint"],
  capabilities: string[],
  extra: Partial<LlmModel> = {},
): LlmModel {
  const prices = { input: 1, output: 1, cacheRead: 1, cacheWrite: 1, cacheWrite1h: 1 };
  return {
    id,
    type: "llm",
    name: id,
    description: "",
    endpoint,
    provider,
    upstream_model: id,
    capabilities: ["streaming", "tools", ...capabilities],
    pricing: { input: 1 },
    prices,
    ...extra,
  };
}

/** The upstream body a call on `path` becomes for `model`. */
function upstreamBody(path: string, model: LlmModel, body: Record<string, unknown>): Record<string, any> {
  const provider = providers.get(model.provider)!;
  const spoken = provider.speaks ?? model.endpoint;
  return JSON.parse(prepareTranslation(path, spoken, { model: model.id, ...body }, model, provider, () => {}).text);
}

const anthropicAsk = { max_tokens: 1000, messages: [{ role: "user", content: "hi" }] };
const chatAsk = { messages: [{ role: "user", content: "hi" }] };

describe("OpenAI's reasoning models: temperature and top_p are dropped", () => {
  test("GPT-5 on Responses, from an Anthropic client", () => {
    const out = upstreamBody("/v1/messages", llm("gpt-5", "openai", "/v1/responses", ["reasoning"]), {
      ...anthropicAsk,
      temperature: 0.2,
    });
    expect(out.temperature).toBeUndefined();
    expect(out.top_p).toBeUndefined();
  });
  test("GPT-5.2 on Chat Completions, from a Responses client", () => {
    const out = upstreamBody("/v1/responses", llm("gpt-5.2", "openai", "/v1/chat/completions", ["reasoning"]), {
      input: "hi",
      temperature: 0.2,
      top_p: 0.5,
    });
    expect(out.temperature).toBeUndefined();
    expect(out.top_p).toBeUndefined();
  });
  test("a model that does not reason keeps them (GPT-4.1)", () => {
    const out = upstreamBody("/v1/chat/completions", llm("gpt-4.1", "openai", "/v1/responses", []), {
      ...chatAsk,
      temperature: 0.2,
      top_p: 0.5,
    });
    expect(out).toMatchObject({ temperature: 0.2, top_p: 0.5 });
  });
});

describe("models that do not reason: no reasoning fields", () => {
  test("GPT-4.1 on Responses: neither reasoning nor its encrypted content is asked", () => {
    const out = upstreamBody("/v1/chat/completions", llm("gpt-4.1", "openai", "/v1/responses", []), {
      ...chatAsk,
      reasoning_effort: "high",
    });
    expect(out.reasoning).toBeUndefined();
    expect(out.include).toBeUndefined();
    const thinking = upstreamBody("/v1/messages", llm("gpt-4o", "openai", "/v1/responses", []), {
      ...anthropicAsk,
      thinking: { type: "enabled", budget_tokens: 2000 },
    });
    expect(thinking.reasoning).toBeUndefined();
  });
  test("a reasoning GPT keeps its effort", () => {
    const out = upstreamBody("/v1/chat/completions", llm("gpt-5", "openai", "/v1/responses", ["reasoning"]), {
      ...chatAsk,
      reasoning_effort: "high",
    });
    expect(out.reasoning).toMatchObject({ effort: "high" });
  });
  test("a chat upstream that does not reason gets no reasoning_effort (Gemini Flash-Lite)", () => {
    const out = upstreamBody("/v1/messages", llm("gemini-2.5-flash-lite", "gemini", "/v1/chat/completions", []), {
      ...anthropicAsk,
      thinking: { type: "enabled", budget_tokens: 2000 },
    });
    expect(out.reasoning_effort).toBeUndefined();
    const reasoning = upstreamBody(
      "/v1/messages",
      llm("gemini-2.5-pro", "gemini", "/v1/chat/completions", ["reasoning"]),
      { ...anthropicAsk, thinking: { type: "enabled", budget_tokens: 2000 } },
    );
    expect(reasoning.reasoning_effort).toBe("low");
  });
  test("a Claude without extended thinking is asked none (Haiku 3.5)", () => {
    const out = upstreamBody("/v1/chat/completions", llm("claude-3-5-haiku", "anthropic", "/v1/messages", []), {
      ...chatAsk,
      reasoning_effort: "high",
      max_completion_tokens: 8000,
    });
    expect(out.thinking).toBeUndefined();
    const thinks = upstreamBody(
      "/v1/chat/completions",
      llm("claude-sonnet-4-5", "anthropic", "/v1/messages", ["thinking"]),
      { ...chatAsk, reasoning_effort: "high", max_completion_tokens: 30000 },
    );
    expect(thinks.thinking).toMatchObject({ type: "enabled" });
  });
});

describe("xAI: the grok-4 family reasons at a fixed effort", () => {
  test("grok-4 and grok-code-fast-1 get no reasoning.effort; grok-3-mini and grok-4.3 do", () => {
    for (const id of ["grok-4", "grok-4-fast-reasoning", "grok-code-fast-1"]) {
      const out = upstreamBody("/v1/chat/completions", llm(id, "xai", "/v1/responses", ["reasoning"]), {
        ...chatAsk,
        reasoning_effort: "high",
      });
      expect(out.reasoning?.effort, id).toBeUndefined();
    }
    for (const id of ["grok-3-mini", "grok-4.3"]) {
      const out = upstreamBody("/v1/chat/completions", llm(id, "xai", "/v1/responses", ["reasoning"]), {
        ...chatAsk,
        reasoning_effort: "high",
      });
      expect(out.reasoning?.effort, id).toBe("high");
    }
  });
});
