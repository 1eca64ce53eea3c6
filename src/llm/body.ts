// Reading the few things the gateway needs from a request or answer body, as cheaply as it can.

import { ApiError } from "../http/errors";
import { findValue, objectEnd } from "./protocols/json-scan";
import { reserialised, SplicedBody } from "./protocols/common";
import { joined } from "./bytes";
import { fieldsOf } from "./request-fields";
import type { LlmProtocol } from "./protocols/index";
import type { TokenUsage } from "./usage";

const decoder = new TextDecoder();

/**
 * The body's bytes without a leading UTF-8 byte-order mark: decoding drops it for the parse, and the bytes go
 * upstream as they are, where a strict parser (Go's, Python's json.loads on bytes) would refuse it.
 */
export function withoutBom(bytes: Uint8Array): Uint8Array {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

/**
 * The request body as an object: its top-level fields, a large value parsed only when read (request-fields.ts);
 * bytes the scan cannot vouch for are parsed whole, for JSON.parse's verdict. The client's bytes are what goes
 * upstream (proxy.ts).
 */
export function requestBodyOf(bytes: Uint8Array, wholeParseBytes?: number): Record<string, any> {
  const fields = fieldsOf(bytes, wholeParseBytes);
  if (fields) return fields;
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new ApiError(400, "invalid_json", "The request body is not valid JSON.");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new ApiError(400, "invalid_request", "The request body must be a JSON object.");
  return body as Record<string, any>;
}

/**
 * The body with its top-level `model` replaced by the upstream's name for it (the catalog may sell a model under
 * another id). Splices the bytes when `"model":"<name>"` occurs exactly once, which keeps every other byte the
 * client's and encodes nothing (Claude Code's 200 KB bodies take this path on every turn); re-serialises otherwise,
 * and whenever the body holds an escape that could spell the key or the name another way (`"mod\u0065l"` is
 * `model` to every parser, `acme\/gpt` is `acme/gpt`): the one literal occurrence may then be a nested field's.
 */
export function withUpstreamModel(
  body: string | Uint8Array | SplicedBody,
  clientModel: string,
  upstreamModel: string,
): string | Uint8Array | SplicedBody {
  if (typeof body === "string") return reserialised({ ...JSON.parse(body), model: upstreamModel }); // already re-serialised once
  // A body already spliced (chat's include_usage) is searched in the client's bytes it edits: the edit holds no model.
  const spliced = body instanceof SplicedBody ? body : new SplicedBody(body, []);
  const client = spliced.bytes;
  const bytes = Buffer.from(client.buffer, client.byteOffset, client.byteLength);
  const needle = Buffer.from(JSON.stringify(clientModel));
  let at = -1;
  let count = 0;
  for (let i = bytes.indexOf(needle); i !== -1; i = bytes.indexOf(needle, i + 1)) {
    if (isModelValue(bytes, i)) {
      at = i;
      count++;
    }
  }
  // Any escape that can spell the same name another way (`\u`, or `\/` for a `/`) could hide the top-level value.
  const escaped = bytes.indexOf("\\u") !== -1 || (clientModel.includes("/") && bytes.indexOf("\\/") !== -1);
  if (count === 1 && !escaped) return spliced.with(at, needle.length, JSON.stringify(upstreamModel));
  const edited = spliced.edits.length ? spliced.toBytes() : client;
  return reserialised({ ...JSON.parse(decoder.decode(edited)), model: upstreamModel });
}

const MODEL_KEY = Buffer.from('"model"');
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** Whether the JSON string at `valueAt` is the value of a `"model"` key (whitespace allowed around the colon). */
function isModelValue(bytes: Buffer, valueAt: number): boolean {
  let j = valueAt - 1;
  while (j >= 0 && isSpace(bytes[j])) j--;
  if (bytes[j] !== 0x3a /* : */) return false;
  j--;
  while (j >= 0 && isSpace(bytes[j])) j--;
  const start = j - MODEL_KEY.length + 1;
  return start >= 0 && bytes.subarray(start, j + 1).equals(MODEL_KEY);
}

/** What metering reads from a non-streaming answer: its stated usage, and (only when it states none) the basis of
 *  the estimate, the characters of generated content it carries. */
export interface AnswerFacts {
  usage: TokenUsage | null;
  outputChars: number;
}

/** The answer's usage, or, when it states none, the characters of generated content it carries. */
export function answerFacts(proto: LlmProtocol, text: string, whole = false): AnswerFacts {
  const usage = usageOfText(proto, text, whole);
  return { usage, outputChars: usage ? 0 : proto.outputCharsOfBody(text) };
}

/**
 * Usage of a non-streaming answer. Every protocol puts `usage` at the top level near the end of the body, so only
 * that object is parsed (an embeddings answer can be megabytes of vectors before it); if the look fails, the whole
 * body is parsed. The text may be only the answer's tail (pump.ts keepTail): then that parse fails and the answer
 * counts as stating no usage. `whole`: the whole body is parsed first, for what lies outside the usage object (a
 * Responses answer's web searches are its output items); a tail still gives its usage object.
 */
function usageOfText(proto: LlmProtocol, text: string, whole: boolean): TokenUsage | null {
  if (whole) {
    const usage = usageOfWhole(proto, text);
    if (usage) return usage;
  }
  const key = text.lastIndexOf('"usage"');
  if (key !== -1) {
    const at = findValue(text, '"usage"', key);
    if (at !== -1 && text.charCodeAt(at) === 0x7b) {
      const end = objectEnd(text, at);
      if (end !== -1) {
        try {
          const usage = proto.usageFromBody({ usage: JSON.parse(text.slice(at, end)) });
          if (usage) return usage;
        } catch {
          /* fall through to the full parse */
        }
      }
    }
  }
  return whole ? null : usageOfWhole(proto, text);
}

function usageOfWhole(proto: LlmProtocol, text: string): TokenUsage | null {
  try {
    return proto.usageFromBody(JSON.parse(text));
  } catch {
    return null;
  }
}

/**
 * Why a 200's content-type cannot be the answer asked for, or null: a stream asked for and not given (or the
 * reverse), or a non-streaming answer that is not JSON (an HTML error page from a proxy in front of the upstream).
 * No content-type at all is left to the body's own check (isWholeAnswer).
 */
export function answerTypeMisfit(streamAsked: boolean, sse: boolean, contentType: string): string | null {
  if (streamAsked !== sse) return streamAsked ? "not a stream" : "a stream where JSON was asked for";
  if (!sse && contentType !== "" && !contentType.toLowerCase().includes("json")) return "not JSON";
  return null;
}

/**
 * Whether a non-streaming answer's text is a whole JSON object: it opens with `{` (not looked at on a `tail`, whose
 * head was checked before it was forwarded), closes with `}`, and that `}` is not its usage object's own (an answer
 * cut right after its usage, which every protocol puts near its end). Cheap on the usual answer, which states usage;
 * one that states none is parsed whole (a tail cannot be, and passes on its ends alone).
 */
export function isWholeAnswer(text: string, statesUsage: boolean, tail = false): boolean {
  let last = text.length - 1;
  while (last >= 0 && isSpace(text.charCodeAt(last))) last--;
  if (text.charCodeAt(last) !== 0x7d /* } */) return false;
  if (!tail) {
    let first = 0;
    while (first < last && isSpace(text.charCodeAt(first))) first++;
    if (text.charCodeAt(first) !== 0x7b /* { */) return false;
  }
  if (!statesUsage) {
    if (tail) return true;
    try {
      const json = JSON.parse(text);
      return typeof json === "object" && json !== null && !Array.isArray(json);
    } catch {
      return false;
    }
  }
  const at = findValue(text, '"usage"', text.lastIndexOf('"usage"'));
  const end = at === -1 ? -1 : objectEnd(text, at);
  return end !== -1 && end <= last;
}

/** The first byte of chunks that is not JSON whitespace, or -1 when there is none. */
export function firstNonSpace(chunks: Uint8Array[]): number {
  for (const chunk of chunks) for (const b of chunk) if (!isSpace(b)) return b;
  return -1;
}

/** The text of an answer read in chunks. */
export function textOf(chunks: Uint8Array[]): string {
  return decoder.decode(joined(chunks));
}
