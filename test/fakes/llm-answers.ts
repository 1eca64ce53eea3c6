// What the fake LLM upstream answers: fixture bytes per protocol and scenario, adjusted only where a real upstream
// would differ (chat streams without include_usage carry no usage; chat/responses echo the requested model).
// Timing and connection behaviour live in llm-upstream.ts.

import { scriptedBody, type AgentStep } from "./agent-script";
import { fixtureBytes, type FixtureName } from "./fixtures";

export type FakeProtocol = "anthropic" | "chat" | "responses" | "embeddings";

export type ScenarioKind =
  | "ok"
  | "tool"
  | "cache"
  | "search"
  | "reasoning"
  | "error"
  | "stream-error"
  | "stream-failed"
  | "drop"
  | "slow"
  | "fast"
  | "script";

export interface ScenarioSpec {
  kind: ScenarioKind;
  /** script: a coding agent's steps, answered in the upstream's protocol (agent-script.ts) */
  steps?: AgentStep[];
  /** error: HTTP status (default 500) */
  status?: number;
  /** error 429: the retry-after header value (default "1") */
  retryAfter?: string;
  /** error: raw body to send instead of the protocol's error body */
  body?: string;
  /** error: the content-type of that raw body (default application/json) */
  contentType?: string;
  /** slow / fast / drop: which answer to send (default ok) */
  variant?: "ok" | "tool" | "cache" | "search" | "reasoning";
  /** delay before the status line and headers */
  headersDelayMs?: number;
  /** delay after the headers, before the first body byte (slow: 300) */
  firstByteMs?: number;
  /** delay between chunks (default: irregular 0–3 ms gaps; slow: 50; fast: none) */
  chunkDelayMs?: number;
  /** drop: body bytes sent before the connection is cut (default half the body) */
  dropAfterBytes?: number;
  /** drop: cut right after this many whole SSE events instead (a stream that breaks between two events) */
  dropAfterEvents?: number;
  /** drop: hold the connection open after those bytes until the test calls `cut()` (it has seen them arrive): a busy
   * gateway's HTTP client loses the bytes that reach it together with the reset, so a timed cut may land earlier */
  cutWhenTold?: boolean;
  /** streams: end the body cleanly (no reset) right after this many whole SSE events, before the stream's own end */
  endAfterEvents?: number;
  /** send this many bytes of the body (0: headers only), then nothing more until the client goes away (a hung
   * upstream); the answer is sent as a stream, with a content-length when `contentLength` is set */
  stallAfterBytes?: number;
  /** streams: the same, right after this many whole SSE events */
  stallAfterEvents?: number;
  /** with a stall: state the whole body's length, as an upstream that hangs mid-body would have */
  contentLength?: boolean;
  /** non-streaming answers: sent in irregular pieces, as streams are, instead of in one write */
  chunked?: boolean;
  /** streams: the whole stream in one write with its headers, as a fast upstream's short stream reaches a busy
   * gateway (already complete when the gateway first looks at it) */
  whole?: boolean;
  /** the largest piece of an irregularly cut body (default 160 bytes) */
  pieceBytes?: number;
  /** streams: one piece per SSE event (as `fast` sends them), with the scenario's delays between them */
  eventPieces?: boolean;
  /** non-streaming answers: gzip-compressed with content-encoding (as real upstreams answer SDKs) */
  gzip?: boolean;
  /** non-streaming answers: this many spaces after the opening `{`, the same JSON made as large as, say, the
   * embeddings of many inputs, with its usage still last (where every upstream puts it) */
  padBytes?: number;
  /** padBytes go just before the top-level `"usage"` key instead: what comes earlier (a Responses answer's output
   * items) is then far from the end, as in a long answer */
  padBeforeUsage?: boolean;
}

export type Scenario = ScenarioKind | ScenarioSpec;

export function toSpec(s: Scenario): ScenarioSpec {
  const spec = typeof s === "string" ? { kind: s } : { ...s };
  if (spec.kind === "slow") {
    spec.firstByteMs ??= 300;
    spec.chunkDelayMs ??= 50;
  }
  return spec;
}

export interface Answer {
  status: number;
  contentType: "text/event-stream" | "application/json";
  body: Uint8Array;
  headers: Record<string, string>;
}

type Pick = { stream: FixtureName; json: FixtureName };
// search: the upstream ran two web searches (and, Anthropic, wrote 1000 of its 1200 cache tokens for an hour).
// reasoning: the model thought first (Anthropic thinking with a signature, DeepSeek's reasoning_content, a Responses
// reasoning item with encrypted_content), then answered.
const CONTENT: Record<
  Exclude<FakeProtocol, "embeddings">,
  Record<"ok" | "tool" | "cache" | "search" | "reasoning", Pick>
> = {
  anthropic: {
    ok: { stream: "A_stream_text.sse", json: "A_nonstream.json" },
    tool: { stream: "A_stream_tool.sse", json: "A_nonstream.json" },
    cache: { stream: "A_stream_text.sse", json: "A_nonstream.json" }, // cache write 1450 / cache read 2113
    search: { stream: "A_stream_search.sse", json: "A_nonstream_search.json" },
    reasoning: { stream: "A_stream_thinking.sse", json: "A_nonstream_thinking.json" },
  },
  chat: {
    ok: { stream: "B_stream.sse", json: "B_nonstream.json" },
    tool: { stream: "B_stream_tool.sse", json: "B_nonstream_tool.json" },
    cache: { stream: "B_stream_cache.sse", json: "B_nonstream.json" },
    search: { stream: "B_stream.sse", json: "B_nonstream.json" }, // chat has no hosted search
    reasoning: { stream: "B_stream_reasoning.sse", json: "B_nonstream_reasoning.json" },
  },
  responses: {
    ok: { stream: "C_stream.sse", json: "C_nonstream.json" },
    tool: { stream: "C_stream_tool.sse", json: "C_nonstream_tool.json" },
    cache: { stream: "C_stream.sse", json: "C_nonstream.json" },
    search: { stream: "C_stream_search.sse", json: "C_nonstream_search.json" },
    reasoning: { stream: "C_stream_reasoning.sse", json: "C_nonstream_reasoning.json" },
  },
};

const MIDSTREAM: Record<Exclude<FakeProtocol, "embeddings">, { error: FixtureName; failed: FixtureName }> = {
  anthropic: { error: "A_stream_error.sse", failed: "A_stream_error.sse" },
  chat: { error: "B_stream_midstream_error.sse", failed: "B_stream_midstream_error.sse" },
  responses: { error: "C_stream_error.sse", failed: "C_stream_failed.sse" },
};

const FIXTURE_MODEL: Partial<Record<FakeProtocol, string>> = {
  chat: "gpt-4o-2024-08-06",
  responses: "gpt-4.1-2025-04-14",
};

/** The body for a successful or mid-stream-failing answer; `null` for scenarios that are HTTP errors. */
export function contentFor(protocol: FakeProtocol, body: any, spec: ScenarioSpec): Answer | null {
  const stream = body?.stream === true && protocol !== "embeddings";
  const type = stream ? "text/event-stream" : "application/json";
  if (protocol === "embeddings") {
    if (spec.kind === "stream-error" || spec.kind === "stream-failed") return null;
    const name = body?.encoding_format === "base64" ? "D_base64.json" : "D_float.json";
    return { status: 200, contentType: type, body: padded(fixtureBytes(name), spec), headers: {} };
  }
  if (spec.kind === "script") {
    const scripted = scriptedBody(protocol, body, spec.steps ?? []);
    return scripted === null
      ? null
      : { status: 200, contentType: type, body: new TextEncoder().encode(scripted), headers: {} };
  }
  let name: FixtureName;
  if (spec.kind === "stream-error" || spec.kind === "stream-failed") {
    if (!stream) return null; // no stream to fail inside: answer as an HTTP 500 instead
    name = MIDSTREAM[protocol][spec.kind === "stream-error" ? "error" : "failed"];
  } else {
    const variant =
      spec.kind === "tool" || spec.kind === "cache" || spec.kind === "search" || spec.kind === "reasoning"
        ? spec.kind
        : (spec.variant ?? "ok");
    name = CONTENT[protocol][variant][stream ? "stream" : "json"];
  }
  const includeUsage = body?.stream_options?.include_usage === true;
  const bytes = adjusted(name, protocol, stream, includeUsage, body?.model);
  return { status: 200, contentType: type, body: stream ? bytes : padded(bytes, spec), headers: {} };
}

function padded(json: Uint8Array, spec: ScenarioSpec): Uint8Array {
  const n = spec.padBytes ?? 0;
  if (n <= 0) return json;
  // Just inside the top-level object, or just before its usage key (the last one: usage objects come last).
  const start = spec.padBeforeUsage ? Buffer.from(json).lastIndexOf('"usage"') : json.indexOf(0x7b) + 1;
  const out = new Uint8Array(json.length + n).fill(0x20);
  out.set(json.subarray(0, start), 0);
  out.set(json.subarray(start), start + n);
  return out;
}

const adjustedCache = new Map<string, Uint8Array>();

function adjusted(
  name: FixtureName,
  protocol: FakeProtocol,
  stream: boolean,
  includeUsage: boolean,
  model: unknown,
): Uint8Array {
  const dropUsage = protocol === "chat" && stream && !includeUsage;
  const from = FIXTURE_MODEL[protocol];
  const echo = from !== undefined && typeof model === "string" && model !== from;
  if (!dropUsage && !echo) return fixtureBytes(name);
  const key = `${name}|${dropUsage}|${echo ? model : ""}`;
  let out = adjustedCache.get(key);
  if (out) return out;
  let text = new TextDecoder().decode(fixtureBytes(name));
  // Real OpenAI, without include_usage: no usage-only chunk and no `usage` field on the other chunks.
  if (dropUsage) {
    text = text
      .split(/(?<=\n\n)/)
      .filter((ev) => !/"choices":\[\],"usage":\{/.test(ev))
      .join("");
    text = text.replaceAll(',"usage":null', "");
  }
  if (echo) text = text.replaceAll(`"model":"${from}"`, `"model":${JSON.stringify(model)}`);
  out = new TextEncoder().encode(text);
  if (adjustedCache.size > 256) adjustedCache.clear();
  adjustedCache.set(key, out);
  return out;
}

const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/** The protocol's HTTP error answer; recorded bodies where one exists (Anthropic 404, OpenAI 429). */
export function errorFor(
  protocol: FakeProtocol,
  status: number,
  spec: ScenarioSpec,
  requestId: string,
  model: unknown,
): Answer {
  const headers: Record<string, string> = {};
  if (status === 429) headers["retry-after"] = spec.retryAfter ?? "1";
  let body: Uint8Array;
  const enc = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
  if (spec.body !== undefined) body = new TextEncoder().encode(spec.body);
  else if (protocol === "anthropic") {
    body =
      status === 404
        ? fixtureBytes("A_error_404.json")
        : enc({
            type: "error",
            error: {
              type: ANTHROPIC_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"),
              message: status >= 500 ? "Internal server error" : "Request failed",
            },
            request_id: requestId,
          });
  } else if (status === 429) body = fixtureBytes("B_error_429.json");
  else if (status === 404)
    body = enc({
      error: {
        message: `The model \`${String(model)}\` does not exist or you do not have access to it.`,
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      },
    });
  else if (status >= 500)
    body = enc({
      error: {
        message: "The server had an error while processing your request. Sorry about that!",
        type: "server_error",
        param: null,
        code: null,
      },
    });
  else body = enc({ error: { message: "Invalid request.", type: "invalid_request_error", param: null, code: null } });
  return { status, contentType: (spec.contentType ?? "application/json") as Answer["contentType"], body, headers };
}
