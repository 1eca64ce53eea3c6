// OpenAI Chat Completions (POST /v1/chat/completions; also what DeepSeek, Gemini's OpenAI-compatible endpoint and
// xAI speak). The one protocol where the gateway must change the request: a stream carries usage only when
// `stream_options.include_usage` is true, so the gateway asks for it and, when the client had not, cuts the extra
// usage-only chunk (`"choices":[]`) back out so the client's stream looks as if the gateway were not there.

import { fromChatUsage } from "../usage.ts";
import { hasMaxCredits, openAiErrorBody, passthroughBody, positiveInt, reserialised, splicedBytes, withoutMaxCredits } from "./common.ts";
import { findValue, hasObjectValue, sumStringValues } from "./json-scan.ts";
import { createEventStripper } from "./sse-strip.ts";
import { createSseTap, toTapError, type TapState } from "./sse-tap.ts";
import { priorityTier, type PaidToolRules } from "./paid-tools.ts";
import type { LlmProtocol, UpstreamBody } from "./types.ts";
import { chatUnseenInput } from "./unseen-input.ts";

const INCLUDE_USAGE = '"stream_options":{"include_usage":true},';

// Generated content in a delta: text, DeepSeek's reasoning_content, tool-call arguments, refusals. Every
// occurrence counts (n > 1 choices, several tool calls in one chunk).
const CONTENT_KEYS = ['"content"', '"reasoning_content"', '"arguments"', '"refusal"'];

function onEvent(ev: { data: string }, s: TapState): void {
  const d = ev.data;
  if (d === "[DONE]") {
    s.completed = true;
    return;
  }
  if (hasObjectValue(d, '"error"')) {
    const j = JSON.parse(d);
    if (j && typeof j.error === "object" && j.error !== null) {
      s.failed = true;
      s.error = toTapError(j.error);
      return;
    }
  }
  if (hasObjectValue(d, '"usage"')) {
    const u = fromChatUsage(JSON.parse(d).usage);
    if (u) {
      s.usage = u;
      // The usage chunk follows the last choice's finish; some upstreams then omit [DONE].
      s.completed = true;
    }
  }
  for (const k of CONTENT_KEYS) s.outputChars += sumStringValues(d, k);
}

/** The chunk the gateway asked for: `"choices": []` and a usage object. Checked on whole events only. */
export function isUsageOnlyEvent(text: string): boolean {
  if (!hasObjectValue(text, '"usage"')) return false;
  const c = findValue(text, '"choices"');
  if (c === -1 || text.charCodeAt(c) !== 0x5b /* [ */) return false;
  let j = c + 1;
  while (text.charCodeAt(j) === 0x20 || text.charCodeAt(j) === 0x0a || text.charCodeAt(j) === 0x0d) j++;
  return text.charCodeAt(j) === 0x5d /* ] */;
}

function prepareUpstreamBody(body: any, bytes: Uint8Array): UpstreamBody {
  const needsUsage = body?.stream === true && body.stream_options?.include_usage !== true;
  if (!needsUsage) return passthroughBody(body, bytes);
  if (!hasMaxCredits(body) && !("stream_options" in body)) {
    // The common case: splice the option in after the opening brace. The body parsed as an object with at least
    // `stream` in it, so the first `{` opens it and a comma is always right. Every other byte stays the client's.
    return { body: splicedBytes(bytes, bytes.indexOf(0x7b /* { */) + 1, 0, INCLUDE_USAGE), stripUsageChunk: true };
  }
  const out = withoutMaxCredits(body);
  const prev = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
  out.stream_options = { ...prev, include_usage: true };
  return { body: reserialised(out), stripUsageChunk: true };
}

// Chat tools are the client's own functions; web search here is `web_search_options` on OpenAI's search models,
// billed per search with no count in the answer.
const paidTools: PaidToolRules = {
  webSearchType: null,
  searchLimit: () => undefined,
  refusedTools: [],
  refusedFields: [
    ["web_search_options", () => "web search on chat completions is billed per search"],
    ["service_tier", priorityTier],
  ],
};

export const chat: LlmProtocol = {
  name: "chat",
  usageBearingPaths: ["/v1/chat/completions"],
  freePaths: [],
  requestIdHeader: "x-request-id",
  isStream: (body) => body?.stream === true,
  // max_completion_tokens is current, max_tokens deprecated; both are per choice, so n choices may produce n×.
  maxOutputTokens: (body) => positiveInt(body?.max_completion_tokens) ?? positiveInt(body?.max_tokens),
  choices: (body) => positiveInt(body?.n) ?? 1,
  paidTools,
  unseenInput: chatUnseenInput,
  prepareUpstreamBody,
  usageFromBody: (json) => fromChatUsage(json?.usage),
  // The answer's message carries the same keys as the deltas.
  outputCharsOfBody: (text) => CONTENT_KEYS.reduce((n, k) => n + sumStringValues(text, k), 0),
  createStreamTap: ({ stripUsageChunk }) =>
    createSseTap(onEvent, stripUsageChunk ? createEventStripper(isUsageOnlyEvent) : undefined),
  errorBody: openAiErrorBody,
  // A chunk that is an error body, as OpenAI sends one mid-stream (fixtures/B_stream_midstream_error.sse).
  droppedStreamEvent: (e) => `data: ${JSON.stringify(openAiErrorBody(e))}\n\n`,
};
