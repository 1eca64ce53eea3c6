// A request body read for its top-level fields only. The gateway needs a handful of them (model, stream, the token
// limits, tools, max_credits); a coding agent's turn is mostly conversation the gateway forwards unread. So the
// bytes are scanned once for where each top-level value lies, small values are parsed at once, and a large one
// (the conversation, the tool schemas) only when something reads it. What the scan walks it checks as JSON.parse
// would (the object's own syntax, strings closed, brackets matched); what lies inside a value nothing reads is the
// upstream's to refuse, in the caller's own protocol (a native call's upstream speaks it), with nothing charged.

import { ApiError } from "../http/errors";

/** Values up to this many bytes are parsed with the scan; larger ones when first read. */
const EAGER_BYTES = 256;

/** Bodies up to this many bytes are parsed whole: as cheap as the scan, and JSON.parse checks every byte. */
const WHOLE_PARSE_BYTES = 4096;

const decoder = new TextDecoder();

/** Where one top-level value lies in the bytes: [start, end). */
type Span = readonly [start: number, end: number];

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The top-level members of the JSON object in `bytes`, key → where its value lies (a repeated key: its last
 * value, in its first place, as JSON.parse gives it); null when the bytes are not such an object as far as the
 * scan can tell (the caller then parses them whole, for JSON.parse's own verdict).
 */
export function topLevelMembers(bytes: Uint8Array): Map<string, Span> | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = buf.length;
  const members = new Map<string, Span>();
  let at = skipSpace(buf, 0);
  if (buf[at] !== 0x7b /* { */) return null;
  at = skipSpace(buf, at + 1);
  if (buf[at] === 0x7d /* } */) return skipSpace(buf, at + 1) === length ? members : null;
  for (;;) {
    if (buf[at] !== 0x22 /* " */) return null;
    const keyEnd = stringEnd(buf, at);
    if (keyEnd === -1) return null;
    const key = keyOf(buf, at, keyEnd);
    if (key === null) return null;
    at = skipSpace(buf, keyEnd);
    if (buf[at] !== 0x3a /* : */) return null;
    const start = skipSpace(buf, at + 1);
    const end = valueEnd(buf, start);
    if (end === -1) return null;
    // A repeated key's earlier value is never read: checked here, as JSON.parse would have.
    const earlier = members.get(key);
    if (earlier && !isJson(buf, earlier)) return null;
    members.set(key, [start, end]);
    at = skipSpace(buf, end);
    if (buf[at] === 0x2c /* , */) {
      at = skipSpace(buf, at + 1);
      continue;
    }
    if (buf[at] !== 0x7d) return null;
    return skipSpace(buf, at + 1) === length ? members : null;
  }
}

function skipSpace(buf: Buffer, at: number): number {
  while (at < buf.length && isSpace(buf[at]!)) at++;
  return at;
}

/** The key of the string at [start, end): decoded as it is, or by JSON.parse when it holds an escape (or a byte
 *  JSON does not allow there, for JSON.parse's verdict). */
function keyOf(buf: Buffer, start: number, end: number): string | null {
  let plain = true;
  for (let i = start + 1; i < end - 1; i++) {
    const byte = buf[i]!;
    if (byte < 0x20 || byte === 0x5c) {
      plain = false;
      break;
    }
  }
  const text = decoder.decode(buf.subarray(start + 1, end - 1));
  if (plain) return text;
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return null;
  }
}

/**
 * Index just past the string whose opening quote is at `start`, or -1 when it never closes. Its closing quote is the
 * first `"` after an even run of backslashes; short strings are walked, long ones searched natively.
 */
function stringEnd(buf: Buffer, start: number): number {
  let from = start + 1;
  for (;;) {
    let quote = -1;
    const stop = Math.min(from + 24, buf.length);
    for (let at = from; at < stop; at++) {
      if (buf[at] === 0x22) {
        quote = at;
        break;
      }
    }
    if (quote === -1) {
      if (stop === buf.length) return -1;
      quote = buf.indexOf(0x22, stop);
      if (quote === -1) return -1;
    }
    let before = quote - 1;
    while (buf[before] === 0x5c /* \ */) before--;
    if ((quote - 1 - before) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Index just past the value starting at `start`, or -1. Objects and arrays: brackets matched, strings skipped. */
function valueEnd(buf: Buffer, start: number): number {
  const first = buf[start];
  if (first === 0x22) return stringEnd(buf, start);
  if (first === 0x7b || first === 0x5b) return containerEnd(buf, start);
  let at = start;
  while (at < buf.length) {
    const byte = buf[at]!;
    if (byte === 0x2c || byte === 0x7d || byte === 0x5d || isSpace(byte)) break;
    at++;
  }
  return at === start ? -1 : at;
}

function containerEnd(buf: Buffer, start: number): number {
  const closers: number[] = [];
  let at = start;
  while (at < buf.length) {
    const byte = buf[at]!;
    if (byte === 0x22) {
      at = stringEnd(buf, at);
      if (at === -1) return -1;
      continue;
    }
    if (byte === 0x7b) closers.push(0x7d);
    else if (byte === 0x5b) closers.push(0x5d);
    else if (byte === 0x7d || byte === 0x5d) {
      if (closers.pop() !== byte) return -1;
      if (closers.length === 0) return at + 1;
    }
    at++;
  }
  return -1;
}

function isJson(buf: Uint8Array, span: Span): boolean {
  try {
    JSON.parse(decoder.decode(buf.subarray(span[0], span[1])));
    return true;
  } catch {
    return false;
  }
}

function invalidJson(): ApiError {
  return new ApiError(400, "invalid_json", "The request body is not valid JSON.");
}

function parseSpan(buf: Uint8Array, [start, end]: Span): unknown {
  try {
    return JSON.parse(decoder.decode(buf.subarray(start, end)));
  } catch {
    throw invalidJson();
  }
}

/** The bytes a body object was read from (fieldsOf), for mentions(): a property no spread, key list or JSON sees. */
const SOURCE = Symbol("request bytes");
interface Source {
  buf: Buffer;
  members: Map<string, Span>;
  spells?: boolean;
}

/**
 * The body as an object of its top-level fields: small values parsed now, large ones when first read (a value
 * that then proves not to be JSON is the caller's 400 invalid_json, as a whole parse would have said). Null when
 * the bytes are not an object the scan can vouch for, or so short that a whole parse costs no more: the caller
 * parses them whole.
 */
export function fieldsOf(bytes: Uint8Array, wholeParseBytes = WHOLE_PARSE_BYTES): Record<string, any> | null {
  if (bytes.byteLength <= wholeParseBytes) return null;
  const members = topLevelMembers(bytes);
  if (members === null) return null;
  const body: Record<string, any> = {};
  for (const [key, span] of members) {
    if (span[1] - span[0] <= EAGER_BYTES) {
      Object.defineProperty(body, key, {
        value: parseSpan(bytes, span),
        writable: true,
        enumerable: true,
        configurable: true,
      });
      continue;
    }
    Object.defineProperty(body, key, {
      enumerable: true,
      configurable: true,
      get() {
        const value = parseSpan(bytes, span);
        Object.defineProperty(body, key, { value, writable: true, enumerable: true, configurable: true });
        return value;
      },
      set(value) {
        Object.defineProperty(body, key, { value, writable: true, enumerable: true, configurable: true });
      },
    });
  }
  const source: Source = { buf: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), members };
  Object.defineProperty(body, SOURCE, { value: source, enumerable: false });
  return body;
}

/** JSON strings (or their openings) a walk looks for, as the bytes to search for (jsonTokens). */
export type JsonTokens = readonly Buffer[];

/** `"image"`, `"web_fetch`…: made once, so that no search encodes its needle again. */
export function jsonTokens(...tokens: string[]): JsonTokens {
  return Object.freeze(tokens.map((t) => Buffer.from(t)));
}

/**
 * Whether the body's top-level `field` may hold one of `tokens` (JSON strings, or their openings: `"image"`,
 * `"web_fetch`), so that a walk of that field looking for them is worth its parse. Exact when it says no: a string
 * value can be spelled only literally or with `\u` escapes, and a body with an escape of a printable ASCII character
 * is taken to mention everything. A field the body does not have mentions nothing (the walk finds nothing in
 * `undefined`); a body not read by fieldsOf (a test's object, a translated one) mentions everything.
 */
export function mentions(body: object, field: string, tokens: JsonTokens): boolean {
  if (tokens.length === 0) return false;
  const source = (body as { [SOURCE]?: Source })[SOURCE];
  if (!source) return true;
  const span = source.members.get(field);
  if (span === undefined) return false;
  source.spells ??= spellsAscii(source.buf);
  if (source.spells) return true;
  const value = source.buf.subarray(span[0], span[1]);
  for (const token of tokens) if (value.indexOf(token) !== -1) return true;
  return false;
}

const ESCAPE = Buffer.from("\\u00");

/** Whether the bytes hold a `\u00XX` escape of a printable ASCII character (one that could spell a key or type). */
function spellsAscii(buf: Buffer): boolean {
  for (let i = buf.indexOf(ESCAPE); i !== -1; i = buf.indexOf(ESCAPE, i + 4)) {
    const high = buf[i + 4];
    if (high !== undefined && high >= 0x32 && high <= 0x37) return true; // \u0020–\u007f
  }
  return false;
}
