// The OpenAI Chat Completions codec: a chat client calling a model of another protocol (client side), and an
// Anthropic or Responses client calling a chat-native model such as Gemini, DeepSeek or GPT on chat (upstream
// side). The pieces live in chat/: client.ts (request in, JSON answer out), client-stream.ts (answer stream out),
// upstream.ts (request out, JSON answer in), upstream-stream.ts (answer stream in), shared.ts.
//
// Dialect keys the upstream side reads from the provider table row (TranslateTarget.dialect), with defaults:
// - maxTokensField: "max_completion_tokens" (default; what OpenAI's reasoning models require) | "max_tokens"
//   (DeepSeek, and upstreams that predate the newer name).
// - reasoningField: unset (default: reasoning is never sent back) | the assistant-message field an upstream wants
//   its own reasoning text back in, e.g. "reasoning_content" for DeepSeek, which requires it on tool-call turns.
//   Answers are read from this field, else `reasoning_content`, else `reasoning`.
// - reasoningEffort: false (default: not sent) | true when the upstream accepts `reasoning_effort` (OpenAI,
//   Gemini's OpenAI-compatible API). A thinking budget maps to the nearest effort.
// - reasoning: true (default) | false for a model that does not reason: no reasoning_effort, whatever
//   reasoningEffort says (providers.ts dialectFor sets it per model).
// - sampling: true (default) | false: temperature and top_p are not sent (reasoning models that refuse them).
// - streamUsage: true (default: a stream asks stream_options.include_usage, which metering needs) | false.
// - images: true (default) | false for a text-only upstream: a request with images is refused (TranslationError).
// - parallelToolCalls: true (default: `parallel_tool_calls` is sent when the request sets it) | false to omit it.
// - thoughtSignatures: false (default) | true for Gemini: a tool call's thought signature (read from any upstream
//   that sends one) goes back on that call, and a turn whose first call has none gets Gemini's skip placeholder.

import type { ClientCodec, UpstreamCodec } from "./ir";
import { decodeRequest, encodeAnswer } from "./chat/client";
import { streamEncoder } from "./chat/client-stream";
import { decodeAnswer, encodeRequest } from "./chat/upstream";
import { streamDecoder } from "./chat/upstream-stream";

export const chatCodec: { client: ClientCodec; upstream: UpstreamCodec } = {
  client: { decodeRequest, encodeAnswer, streamEncoder },
  upstream: { encodeRequest, decodeAnswer, streamDecoder },
};
