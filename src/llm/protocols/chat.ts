// OpenAI Chat Completions (POST /v1/chat/completions; also what DeepSeek, Gemini's OpenAI-compatible endpoint and
// xAI speak). The one protocol where the gateway must change the request: a stream carries usage only when
// `stream_options.include_usage` is true, so the gateway asks for it and, when the client had not, cuts the extra
// usage-only chunk (`"choices":[]`) back out so the client's stream looks as if the gateway were not there.

import { fromChatUsage } from "../usage";
import {
  hasMaxCredits,
  openAiErrorBody,
  passthroughBody,
  positiveInt,
  reserialised,
  splicedBytes,
  withoutMaxCredits,
} from "./common";
import { findValue, hasObjectValue, sumStringValues } from "./json-scan";
import { createEventStripper } from "./sse-strip";
import { createSseTap, toTapError, type TapState } from "./sse-tap";
import { wholeChatStream } from "./sse-whole";
import { priorityTier, type PaidToolRules } from "./paid-tools";
import type { LlmProtocol, UpstreamBody } from "./types";
import { chatUnseenInput } from "./unseen-input";

const INCLUDE_USAGE = '"stream_options":{"include_usage":true},';

// Generated content in a delta: text, DeepSeek's reasoning_content, tool-call arguments, refusals. Every
// occurrence counts (n > 1 choices, several tool calls in one chunk).
const CONTENT_KEYS = ['"content"', '"reasoning_content"', '"arguments"', '"refusal"'];

function onEvent(ev: { data: string }, state: TapState): void {
  const data = ev.data;
  if (data === "[DONE]") {
    state.completed = true;
    return;
  }
  if (hasObjectValue(data, '"error"')) {
    const json = JSON.parse(data);
    if (json && typeof json.error === "object" && json.error !== null) {
      state.failed = true;
      state.error = toTapError(json.error);
      return;
    }
  }
  if (hasObjectValue(data, '"usage"')) {
    const usage = fromChatUsage(JSON.parse(data).usage);
    if (usage) {
      state.usage = usage;
      // The usage chunk follows the last choice's finish; some upstreams then omit [DONE].
      state.completed = true;
    }
  }
  for (const k of CONTENT_KEYS) state.outputChars += sumStringValues(data, k);
}

/** The chunk the gateway asked for: `"choices": []` and a usage object. Checked on whole events only. */
export function isUsageOnlyEvent(text: string): boolean {
  if (!hasObjectValue(text, '"usage"')) return false;
  const choices = findValue(text, '"choices"');
  if (choices === -1 || text.charCodeAt(choices) !== 0x5b /* [ */) return false;
  let at = choices + 1;
  while (text.charCodeAt(at) === 0x20 || text.charCodeAt(at) === 0x0a || text.charCodeAt(at) === 0x0d) at++;
  return text.charCodeAt(at) === 0x5d /* ] */;
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
  unmeteredPaths: [],
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
  wholeStream: (bytes, { stripUsageChunk }) => wholeChatStream(bytes, stripUsageChunk),
  errorBody: openAiErrorBody,
  // A chunk that is an error body, as OpenAI sends one mid-stream (fixtures/B_stream_midstream_error.sse).
  droppedStreamEvent: (e) => `data: ${JSON.stringify(openAiErrorBody(e))}\n\n`,
};
