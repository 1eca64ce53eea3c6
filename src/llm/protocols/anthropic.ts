// Anthropic Messages (POST /v1/messages, also ?beta=true). Body: max_tokens is required; stream via `stream`.
// Usage: message_start states the input counts (output there is a placeholder); each message_delta restates
// totals, cumulative, never increments. So: input counts from message_start, replaced by any non-null ones in
// a message_delta; output from the last message_delta. Never add.

import { fromAnthropicUsage, withAnthropicExtras, type TokenUsage } from "../usage";
import { passthroughBody, positiveInt } from "./common";
import type { PaidToolRules } from "./paid-tools";
import { shortStringValue, sumObjectValues, sumStringValues } from "./json-scan";
import { createSseTap, toTapError, type TapState } from "./sse-tap";
import type { ErrorInfo, LlmProtocol } from "./types";
import { anthropicUnseenInput } from "./unseen-input";

// Anthropic's error type follows the status; the SDK picks its error class by status as well.
const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  422: "invalid_request_error",
  429: "rate_limit_error",
  500: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
  529: "overloaded_error",
};

export function anthropicErrorType(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

// Keys of the generated-content deltas: text_delta, input_json_delta (tool arguments), thinking_delta.
// signature_delta and citations_delta carry no generated text.
const DELTA_KEYS = ['"text"', '"partial_json"', '"thinking"'];

function onEvent(ev: { event?: string; data: string }, state: TapState): void {
  // SDKs drop events without an `event:` line, but the data names its type too; metering should not depend on it.
  switch (ev.event ?? shortStringValue(ev.data, '"type"')) {
    case "content_block_delta": {
      for (const k of DELTA_KEYS) state.outputChars += sumStringValues(ev.data, k);
      return;
    }
    case "content_block_start": {
      // A web search Anthropic runs shows as a server_tool_use block named web_search (billed per search).
      if (ev.data.includes('"server_tool_use"') && shortStringValue(ev.data, '"name"') === "web_search")
        state.webSearches++;
      return;
    }
    case "message_start": {
      const usage = fromAnthropicUsage(JSON.parse(ev.data)?.message?.usage);
      if (usage) state.usage = usage;
      state.outputProvisional = true; // its output_tokens is a placeholder; message_delta states the total
      return;
    }
    case "message_delta": {
      const raw = JSON.parse(ev.data)?.usage;
      if (raw && typeof raw === "object") {
        state.usage = mergeDelta(state.usage, raw);
        if (typeof raw.output_tokens === "number" && Number.isFinite(raw.output_tokens) && raw.output_tokens >= 0)
          state.outputProvisional = false;
      }
      return;
    }
    case "message_stop":
      state.completed = true;
      return;
    case "error":
      state.failed = true;
      state.error = toTapError(JSON.parse(ev.data)?.error);
      return;
  }
}

/** message_delta totals replace what message_start said; absent or null fields keep the earlier value. */
function mergeDelta(prev: TokenUsage | null, raw: Record<string, unknown>): TokenUsage {
  const base = prev ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  const pick = (v: unknown, old: number) =>
    typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : old;
  const merged: TokenUsage = {
    input: pick(raw.input_tokens, base.input),
    output: pick(raw.output_tokens, base.output),
    cacheRead: pick(raw.cache_read_input_tokens, base.cacheRead),
    cacheWrite: pick(raw.cache_creation_input_tokens, base.cacheWrite),
  };
  // The one-hour split and the search count are totals too: a delta that states them replaces the earlier ones.
  if (base.cacheWrite1h) merged.cacheWrite1h = Math.min(base.cacheWrite1h, merged.cacheWrite);
  if (base.webSearches) merged.webSearches = base.webSearches;
  withAnthropicExtras(merged, raw);
  return merged;
}

// Server tools: web_search_<version> is priced per search (usage.server_tool_use.web_search_requests); web_fetch
// costs only the tokens it brings in; code execution is billed by container time.
const paidTools: PaidToolRules = {
  webSearchType: "web_search_",
  searchLimit: (_body, tool) => positiveInt(tool.max_uses),
  refusedTools: [["code_execution_", "by container time"]],
  refusedFields: [],
};

export const anthropic: LlmProtocol = {
  name: "anthropic",
  usageBearingPaths: ["/v1/messages"],
  unmeteredPaths: ["/v1/messages/count_tokens"],
  requestIdHeader: "request-id",
  isStream: (body) => body?.stream === true,
  maxOutputTokens: (body) => positiveInt(body?.max_tokens),
  paidTools,
  unseenInput: anthropicUnseenInput,
  // Nothing to change for usage: Anthropic always reports it.
  prepareUpstreamBody: passthroughBody,
  usageFromBody: (json) => fromAnthropicUsage(json?.usage),
  // Content blocks: text, thinking, and tool_use whose `input` is an object (its JSON text, as the deltas stream it).
  outputCharsOfBody: (text) =>
    sumStringValues(text, '"text"') + sumStringValues(text, '"thinking"') + sumObjectValues(text, '"input"'),
  createStreamTap: () => createSseTap(onEvent),
  errorBody,
  // The event Anthropic itself sends when a stream fails (fixtures/A_stream_error.sse): its data is the error body.
  droppedStreamEvent: (e) => `event: error\ndata: ${JSON.stringify(errorBody(e))}\n\n`,
};

function errorBody(info: ErrorInfo): object {
  return {
    type: "error",
    error: { type: anthropicErrorType(info.status), message: info.message, code: info.code },
    request_id: info.requestId,
  };
}
