// OpenAI Responses (POST /v1/responses). Usage rides only on the final response object: response.completed, or
// response.incomplete when max_output_tokens cut the answer (a normal, billable end). Failures inside a 200
// stream: response.failed (its response.error) or an `error` event ({type:"error", code, message}).

import { ApiError } from "../../http/errors";
import { fromResponsesUsage } from "../usage";
import { openAiErrorBody, passthroughBody, positiveInt } from "./common";
import { shortStringValue, sumStringValues } from "./json-scan";
import { createSseTap, toTapError, type TapState } from "./sse-tap";
import { priorityTier, type PaidToolRules } from "./paid-tools";
import type { LlmProtocol } from "./types";
import { responsesUnseenInput } from "./unseen-input";

const OUTPUT_KEYS = ['"text"', '"arguments"', '"input"', '"refusal"'];

function onEvent(ev: { event?: string; data: string }, state: TapState): void {
  const type = ev.event ?? shortStringValue(ev.data, '"type"');
  if (type === undefined) return;
  // Deltas of generated content: output_text, function_call_arguments, reasoning_text, reasoning_summary_text,
  // refusal, custom_tool_call_input, ... all carry a string `delta`. Audio deltas are base64, not text.
  if (type.endsWith(".delta")) {
    if (type !== "response.audio.delta") state.outputChars += sumStringValues(ev.data, '"delta"');
    return;
  }
  switch (type) {
    case "response.web_search_call.completed":
      state.webSearches++;
      return;
    case "response.completed":
    case "response.incomplete": {
      const response = JSON.parse(ev.data)?.response;
      const usage = fromResponsesUsage(response?.usage, response?.output);
      if (usage) state.usage = usage;
      state.completed = true;
      return;
    }
    case "response.failed": {
      const response = JSON.parse(ev.data)?.response;
      state.failed = true;
      state.error = toTapError(response?.error);
      const usage = fromResponsesUsage(response?.usage, response?.output);
      if (usage) state.usage = usage;
      return;
    }
    case "error": {
      const json = JSON.parse(ev.data);
      state.failed = true;
      // The published shape is flat ({type:"error", code, message}); some servers nest it under `error`.
      const error = json && typeof json.error === "object" && json.error !== null ? json.error : json;
      state.error = toTapError({
        code: error?.code,
        message: error?.message,
        type: error === json ? undefined : error?.type,
      });
      return;
    }
  }
}

// Hosted tools: web_search (and its _preview versions) is priced per search, one web_search_call output item
// each; max_tool_calls caps the built-in tool calls of a response. The others have fees of their own (OpenAI's
// file search and code interpreter, image generation at image rates; xAI's X search, code execution and
// collection search); function, custom, MCP and client-side tools cost only tokens.
const paidTools: PaidToolRules = {
  webSearchType: "web_search",
  searchLimit: (body) => positiveInt(body.max_tool_calls),
  refusedTools: [
    ["file_search", "per call"],
    ["code_interpreter", "per container"],
    ["image_generation", "at image-generation rates"],
    ["x_search", "per call"],
    ["code_execution", "per call"],
    ["collections_search", "per call"],
    ["attachment_search", "per call"],
  ],
  refusedFields: [["service_tier", priorityTier]],
};

export const responses: LlmProtocol = {
  name: "responses",
  usageBearingPaths: ["/v1/responses"],
  unmeteredPaths: [],
  requestIdHeader: "x-request-id",
  isStream: (body) => body?.stream === true,
  // max_output_tokens includes reasoning tokens, as the output price does.
  maxOutputTokens: (body) => positiveInt(body?.max_output_tokens),
  paidTools,
  unseenInput(body) {
    const u = responsesUnseenInput(body);
    // State stored upstream (a previous response, a conversation, a stored prompt) is input the body does not show.
    if (body?.previous_response_id != null || body?.conversation != null || body?.prompt != null) u.unbounded = true;
    return u;
  },
  // Background mode answers at once with a queued response and no usage; the usage only ever appears on a later
  // GET the gateway does not see, so the call could not be charged.
  refuseUnmeterable(body) {
    if (body?.background === true) {
      throw new ApiError(
        400,
        "unsupported_parameter",
        "background mode is not available through this gateway: its answer carries no usage to meter. Send the request without `background` (stream it for long tasks).",
        {
          param: "background",
        },
      );
    }
  },
  prepareUpstreamBody: passthroughBody,
  usageFromBody: (json) => fromResponsesUsage(json?.usage, json?.output),
  // Output items: output_text and summary `text`, function_call `arguments`, custom_tool_call `input`, `refusal`.
  // (The answer's `text` setting is an object, skipped; its `instructions` echo the request and are not counted.)
  outputCharsOfBody: (text) => OUTPUT_KEYS.reduce((n, k) => n + sumStringValues(text, k), 0),
  createStreamTap: () => createSseTap(onEvent),
  // The item's type, as a JSON string: inside any text it would be written `\"web_search_call\"`.
  searchItemToken: '"web_search_call"',
  errorBody: openAiErrorBody,
  // The `error` event (fixtures/C_stream_error.sse), numbered after the last event the client got.
  droppedStreamEvent: (e, lastSent) => {
    const event = {
      type: "error",
      code: e.code,
      message: e.message,
      param: null,
      sequence_number: nextSequenceNumber(lastSent),
    };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  },
};

/** One more than the last `sequence_number` in `bytes` (a stream's last bytes sent); 0 when none shows there. */
function nextSequenceNumber(bytes: Uint8Array | null): number {
  const text = bytes ? new TextDecoder().decode(bytes.subarray(-16_384)) : "";
  const all = [...text.matchAll(/"sequence_number":(\d+)/g)];
  return all.length ? Number(all.at(-1)![1]) + 1 : 0;
}
