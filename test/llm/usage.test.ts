import { describe, expect, test } from "bun:test";
import {
  estimateTokensFromChars,
  fromAnthropicUsage,
  fromChatUsage,
  fromEmbeddingsUsage,
  fromResponsesUsage,
  partialUsage,
  priceUsage,
} from "../../src/llm/usage";

describe("priceUsage", () => {
  test("exact integer charge, each kind at its own price", () => {
    // 38×3000 + 2113×300 + 0×3750 + 74×15000 = 114000 + 633900 + 1110000
    expect(
      priceUsage(
        { input: 38, cacheRead: 2113, cacheWrite: 0, output: 74 },
        { input: 3000, output: 15000, cacheRead: 300, cacheWrite: 3750 },
      ),
    ).toBe(1_857_900);
    expect(
      priceUsage(
        { input: 21, cacheRead: 0, cacheWrite: 1450, output: 12 },
        { input: 3000, output: 15000, cacheRead: 300, cacheWrite: 3750 },
      ),
    ).toBe(63_000 + 5_437_500 + 180_000);
  });
  test("a missing cache price falls back to the input price", () => {
    expect(priceUsage({ input: 135, cacheRead: 1408, cacheWrite: 5, output: 10 }, { input: 2500, output: 10000 })).toBe(
      (135 + 1408 + 5) * 2500 + 100_000,
    );
    expect(
      priceUsage(
        { input: 135, cacheRead: 1408, cacheWrite: 0, output: 10 },
        { input: 2500, output: 10000, cacheRead: 1250 },
      ),
    ).toBe(135 * 2500 + 1408 * 1250 + 100_000);
  });
  test("refuses floats, negatives and overflow instead of letting them into the ledger", () => {
    expect(() => priceUsage({ input: 1.5, output: 0, cacheRead: 0, cacheWrite: 0 }, { input: 1, output: 1 })).toThrow(
      RangeError,
    );
    expect(() => priceUsage({ input: 1, output: 0, cacheRead: 0, cacheWrite: 0 }, { input: 0.1, output: 1 })).toThrow(
      RangeError,
    );
    expect(() => priceUsage({ input: -1, output: 0, cacheRead: 0, cacheWrite: 0 }, { input: 1, output: 1 })).toThrow(
      RangeError,
    );
    expect(() =>
      priceUsage({ input: 2 ** 40, output: 0, cacheRead: 0, cacheWrite: 0 }, { input: 2 ** 20, output: 1 }),
    ).toThrow(RangeError);
  });
});

describe("normalisers", () => {
  test("anthropic: input excludes cache, cache counts beside it", () => {
    expect(
      fromAnthropicUsage({
        input_tokens: 38,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 2113,
        output_tokens: 74,
      }),
    ).toEqual({ input: 38, output: 74, cacheRead: 2113, cacheWrite: 0 });
  });
  test("chat: cached tokens are taken out of prompt_tokens (and DeepSeek's prompt_cache_hit_tokens)", () => {
    expect(
      fromChatUsage({ prompt_tokens: 1543, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 1408 } }),
    ).toEqual({ input: 135, output: 10, cacheRead: 1408, cacheWrite: 0 });
    expect(
      fromChatUsage({
        prompt_tokens: 100,
        completion_tokens: 3,
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 36,
      }),
    ).toEqual({ input: 36, output: 3, cacheRead: 64, cacheWrite: 0 });
    expect(fromChatUsage({ prompt_tokens: 19, completion_tokens: 7 })).toEqual({
      input: 19,
      output: 7,
      cacheRead: 0,
      cacheWrite: 0,
    });
  });
  test("chat: reasoning counted in total_tokens but left out of completion_tokens is output too; OpenAI's readings agree", () => {
    const gemini = {
      prompt_tokens: 21,
      completion_tokens: 0,
      total_tokens: 81,
      completion_tokens_details: { reasoning_tokens: 60 },
    };
    expect(fromChatUsage(gemini)).toEqual({ input: 21, output: 60, cacheRead: 0, cacheWrite: 0 });
    // total also counts 10 tokens that are not output (tool-use prompt): only the stated reasoning is added
    const withTools = {
      prompt_tokens: 21,
      completion_tokens: 10,
      total_tokens: 101,
      completion_tokens_details: { reasoning_tokens: 60 },
    };
    expect(fromChatUsage(withTools)!.output).toBe(70);
    // no reasoning stated: what total says lies beyond the prompt
    expect(fromChatUsage({ prompt_tokens: 21, completion_tokens: 0, total_tokens: 81 })!.output).toBe(60);
    const openai = {
      prompt_tokens: 1543,
      completion_tokens: 10,
      total_tokens: 1553,
      prompt_tokens_details: { cached_tokens: 1408 },
    };
    expect(fromChatUsage(openai)).toEqual({ input: 135, output: 10, cacheRead: 1408, cacheWrite: 0 });
  });
  test("responses and embeddings", () => {
    expect(
      fromResponsesUsage({ input_tokens: 1320, input_tokens_details: { cached_tokens: 1152 }, output_tokens: 8 }),
    ).toEqual({ input: 168, output: 8, cacheRead: 1152, cacheWrite: 0 });
    expect(fromEmbeddingsUsage({ prompt_tokens: 9, total_tokens: 9 })).toEqual({
      input: 9,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(fromChatUsage(null)).toBeNull();
  });
});

describe("partial-output estimate", () => {
  test("tokens ≈ ceil(chars / 4)", () => {
    expect(estimateTokensFromChars(0)).toBe(0);
    expect(estimateTokensFromChars(1)).toBe(1);
    expect(estimateTokensFromChars(32)).toBe(8);
    expect(estimateTokensFromChars(33)).toBe(9);
  });
  test("uses the stream's own input counts when it stated them, else the caller's estimate", () => {
    expect(partialUsage({ usage: null, outputCharsSoFar: 22 }, 40)).toEqual({
      input: 40,
      output: 6,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(
      partialUsage({ usage: { input: 15, output: 1, cacheRead: 0, cacheWrite: 1450 }, outputCharsSoFar: 9 }, 999),
    ).toEqual({ input: 15, output: 3, cacheRead: 0, cacheWrite: 1450 });
  });
});

describe("usage the gateway cannot read is no usage (the call is estimated, never free)", () => {
  test("a count sent as a string, an object or NaN makes the whole usage object unreadable", () => {
    expect(fromChatUsage({ prompt_tokens: "1000", completion_tokens: 10 })).toBeNull();
    expect(fromChatUsage({ prompt_tokens: 1000, completion_tokens: "10" })).toBeNull();
    expect(fromAnthropicUsage({ input_tokens: { n: 5 }, output_tokens: 3 })).toBeNull();
    expect(fromResponsesUsage({ input_tokens: 100, output_tokens: "7" })).toBeNull();
    expect(fromEmbeddingsUsage({ prompt_tokens: "12" })).toBeNull();
    expect(fromChatUsage({})).toBeNull();
  });
  test("null or absent fields are absent, as before; numbers are read", () => {
    expect(fromChatUsage({ prompt_tokens: 12, completion_tokens: 3, total_tokens: null })).toEqual({
      input: 12,
      output: 3,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(fromAnthropicUsage({ output_tokens: 9 })).toMatchObject({ input: 0, output: 9 });
  });
});
