// The questions the proxy asks a wire protocol. Everything that differs between Anthropic Messages, Chat
// Completions, Responses and Embeddings lives behind this interface, so adding a protocol never touches the proxy.

import type { TokenUsage } from "../usage";
import type { PaidToolRules } from "./paid-tools";
import type { UnseenInput } from "./unseen-input";
import type { WholeStream } from "./sse-whole";
import type { SplicedBody } from "./common";

export type ProtocolName = "anthropic" | "chat" | "responses" | "embeddings";

export interface UpstreamBody {
  /** what to send upstream: the client's bytes, untouched (the very same array), unless something had to change:
   *  then the same bytes with a few edits (common.ts SplicedBody), or the body serialised again */
  body: string | Uint8Array | SplicedBody;
  /** chat streams only: the gateway asked for usage the client did not ask for, so the tap must remove it */
  stripUsageChunk: boolean;
  /** hosted tools left out of the request (protocols/paid-tools.ts), named in the answer's headers */
  droppedTools?: string[];
}

export interface TapError {
  type?: string;
  code?: string;
  message?: string;
}

export interface TapResult {
  /**
   * Usage as the stream stated it, or null if it never did. On failure this is whatever was seen before the
   * failure (Anthropic: the input counts of message_start); the proxy releases the hold regardless.
   */
  usage: TokenUsage | null;
  /** the upstream signalled failure inside a 200 stream: Anthropic `error`, Responses `response.failed` or
   *  `error`, chat `data: {"error":...}` */
  failed: boolean;
  error?: TapError;
  /** the protocol's normal end was seen: Anthropic message_stop, chat [DONE] or the usage chunk, Responses
   *  response.completed / response.incomplete */
  completed: boolean;
  /** characters of generated text, tool-call arguments and thinking seen in deltas (decoded, JS string length).
   *  Partial-output estimate: tokens ≈ ceil(chars / 4), see usage.ts estimateTokensFromChars. */
  outputCharsSoFar: number;
  /** web searches the stream showed running before it ended (the final usage states them too, when it comes);
   *  absent: none */
  webSearchesSoFar?: number;
}

export interface StreamTap {
  /**
   * Watch one chunk of upstream SSE bytes. Returns null when the chunk must be forwarded untouched (always, except
   * when stripping the chat usage chunk), or the bytes to forward instead (possibly empty: bytes of an
   * incomplete event are held until the event is complete, so the usage chunk can be cut out exactly).
   */
  feed(chunk: Uint8Array): Uint8Array | null;
  /** Bytes still held back when the upstream ends (only in strip mode); forward them before closing. */
  flush(): Uint8Array | null;
  /** Whether the stream's end, or its error, has been seen so far (what the client got is then an answer whole). */
  sawEnd(): boolean;
  /** Final verdict. Call once, after the last feed (and flush). */
  end(): TapResult;
}

export interface ErrorInfo {
  status: number;
  /** OpenAI shapes only (Anthropic's type follows the status); defaults by status when absent */
  type?: string;
  code: string;
  message: string;
  requestId: string;
  /** OpenAI shapes: the request field the error is about */
  param?: string;
}

// How the proxy uses it: parse the body once (model, token limit) → hold → prepareUpstreamBody. A 2xx stream goes
// through createStreamTap({ stripUsageChunk }) chunk by chunk (forward feed()'s bytes ?? the chunk, flush() at a
// clean end, then end()); r.failed or no r.completed → void, r.usage → post, client abort → partialUsage.
// A JSON answer: usageFromBody, else an estimate from outputCharsOfBody. Own errors: errorBody + requestIdHeader.
export interface LlmProtocol {
  name: ProtocolName;
  /** client-facing paths whose answers carry usage and are metered */
  usageBearingPaths: readonly string[];
  /** other client-facing paths in this protocol's shape that are not metered (Anthropic count_tokens) */
  unmeteredPaths: readonly string[];
  /** the response header this protocol's SDK reads the request id from */
  requestIdHeader: string;
  /** whether the client asked for a stream (embeddings never stream) */
  isStream(body: any): boolean;
  /** max output tokens the request allows per answer choice, for the hold; undefined → the model's maximum */
  maxOutputTokens(body: any): number | undefined;
  /** how many answer choices the request asks for (chat's `n`), each up to maxOutputTokens; absent → 1 */
  choices?(body: any): number;
  /** input tokens the body states exactly (embeddings given as token ids: each number one token, where the byte
   *  estimate counts two bytes, "0,"); the hold takes the larger of this and the byte estimate; absent: none */
  statedInputTokens?(body: any): number;
  /** input the upstream bills that the body does not show (unseen-input.ts): content it fetches by URL or file id,
   * state stored upstream (Responses' previous_response_id); absent: none */
  unseenInput?(body: any): UnseenInput;
  /** fees beyond tokens: which tools and tiers are priced, and which refused (paid-tools.ts); absent: none */
  paidTools?: PaidToolRules;
  /** throws an ApiError (4xx) for a request the gateway cannot meter, before any hold or upstream call */
  refuseUnmeterable?(body: any): void;
  /** what must change before the body goes upstream (see UpstreamBody); decides with cheap checks. `bytes`: the
   *  request body as it came, `body` it parsed */
  prepareUpstreamBody(body: any, bytes: Uint8Array): UpstreamBody;
  /** usage of a non-streaming 2xx answer */
  usageFromBody(json: any): TokenUsage | null;
  /** characters of generated content in a non-streaming 2xx answer's text (as the tap counts deltas): the estimate's
   *  basis when the answer states no usage */
  outputCharsOfBody(text: string): number;
  createStreamTap(opts: { stripUsageChunk: boolean }): StreamTap;
  /** a stream whose whole body is in, without the tap where its bytes allow (sse-whole.ts): what the client gets
   *  and what the tap would have found, or null to go through the tap; absent: always the tap */
  wholeStream?(bytes: Uint8Array, opts: { stripUsageChunk: boolean }): WholeStream | null;
  /** the JSON token each web search leaves in a non-streaming answer's output, where the answer's usage object does
   *  not count them (Responses' `web_search_call` items): counted as a long answer passes, since only its tail is
   *  kept; absent: searches are stated in the usage object, or never priced */
  searchItemToken?: string;
  /** the protocol's error body for an error the gateway itself raises */
  errorBody(e: ErrorInfo): object;
  /**
   * Streaming protocols: the SSE event, in the protocol's own in-stream error shape, that ends a stream whose
   * upstream connection dropped between two events, so that the client's SDK raises an API error saying what
   * happened instead of a bare connection reset. `lastSent`: the last bytes the client got (Responses numbers its
   * events). Absent: embeddings, which never stream.
   */
  droppedStreamEvent?(e: ErrorInfo, lastSent: Uint8Array | null): string;
}
