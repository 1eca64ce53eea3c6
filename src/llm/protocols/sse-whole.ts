// A stream whose whole body is in before anything is sent (native.ts, answered in one piece) has its usage near the
// end. Decoding and parsing every event only to find it is most of the tap's cost, so the bytes are searched
// natively for what could change the verdict, and only the one event that states usage is decoded. Whenever the
// bytes leave any doubt that the tap would see the same (a CR, a BOM, an error key, more than one usage object, an
// event of another shape), the answer returns null and the caller goes through the tap as before.

import { fromChatUsage } from "../usage";
import type { TapResult } from "./types";

// Buffer's native searches run on the chunk itself: Bun's Buffer methods take any Uint8Array, while a Buffer view
// of it (Buffer.from(bytes.buffer, …)) makes the engine materialise the chunk's ArrayBuffer first, ~1.5 µs of a
// sequential call (measured).
const { indexOf, lastIndexOf } = Buffer.prototype;
const find = (buf: Uint8Array, needle: Uint8Array | number, from = 0): number =>
  indexOf.call(buf as Buffer, needle, from);
const findLast = (buf: Uint8Array, needle: Uint8Array, from: number): number =>
  lastIndexOf.call(buf as Buffer, needle, from);

const LF = 0x0a;
const CR = 0x0d;
const BLANK_LINE = Buffer.from("\n\n");
const DATA = Buffer.from("data:");
const ERROR_KEY = Buffer.from('"error"');
const USAGE_KEY = Buffer.from('"usage"');
const CHOICES_KEY = Buffer.from('"choices"');

// A BOM inside the data is kept, as the tap's decoder (which strips one only at the stream's start) keeps it.
const dataText = new TextDecoder("utf-8", { ignoreBOM: true });

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x09;

/** Where the value of a key found at `key` (`len` bytes) starts, or -1 when no `:` follows (not a key). */
function valueAt(buf: Uint8Array, key: number, len: number): number {
  let j = key + len;
  while (isSpace(buf[j])) j++;
  if (buf[j] !== 0x3a /* : */) return -1;
  j++;
  while (isSpace(buf[j])) j++;
  return j;
}

/**
 * The only object value of `"usage"` in the bytes: where its key starts and whether another `"usage"` key comes
 * before it (`keyBefore`, the last such key's offset, -1 if none), or null when there is none or several. A key
 * followed by `{` in the raw bytes can only be a key (a string's quotes are escaped).
 */
function onlyUsageObject(buf: Uint8Array): { at: number; value: number; keyBefore: number } | null {
  let found: { at: number; value: number; keyBefore: number } | null = null;
  let keyBefore = -1;
  for (let i = find(buf, USAGE_KEY); i !== -1; i = find(buf, USAGE_KEY, i + USAGE_KEY.length)) {
    const value = valueAt(buf, i, USAGE_KEY.length);
    if (value === -1) continue;
    if (buf[value] !== 0x7b /* { */) {
      if (found === null) keyBefore = i;
      continue;
    }
    if (found !== null) return null;
    found = { at: i, value, keyBefore };
  }
  return found;
}

/**
 * chat.ts isUsageOnlyEvent, on the data's bytes [from, to) of a single line whose first `"usage"` key has an object
 * value: the first `"choices"` key's value is `[` and `]` with only spaces between. The bytes searched are ASCII,
 * which UTF-8 never uses inside a longer character, so they stand where the decoded text has them.
 */
function isUsageOnlyData(buf: Uint8Array, from: number, to: number): boolean {
  for (let i = find(buf, CHOICES_KEY, from); i !== -1 && i < to; i = find(buf, CHOICES_KEY, i + 1)) {
    const value = valueAt(buf, i, CHOICES_KEY.length);
    if (value === -1 || value >= to) continue;
    if (buf[value] !== 0x5b /* [ */) return false;
    let at = value + 1;
    while (buf[at] === 0x20) at++; // isUsageOnlyEvent's spaces: LF and CR are not in the line
    return at < to && buf[at] === 0x5d /* ] */;
  }
  return false;
}

export interface WholeStream {
  /** what the client gets: the bytes, or the bytes without the usage-only event when the gateway asked for it */
  bytes: Uint8Array;
  /**
   * What the tap would have found, for a stream that states usage (the only kind answered here): the output count
   * is not taken, as nothing reads it when usage is stated (it is an estimate's basis).
   */
  tapped: TapResult;
}

/**
 * A whole chat stream without the tap, or null to use the tap. Exact only under the conditions checked: no CR
 * (every blank line is LF LF, the parser's plain path), no `"error"` anywhere (no event can fail), one object value
 * of `"usage"` in a single-line `data:` event, its first `"usage"` key, that parses and states usage (the last usage
 * the tap would keep, and the only event the strip could remove). `strip`: the gateway asked for usage, so the
 * event goes when it is the usage-only chunk (chat.ts isUsageOnlyEvent); it is cut out of `bytes` in place (they
 * are the caller's to give up), with no copy.
 */
export function wholeChatStream(bytes: Uint8Array, strip: boolean): WholeStream | null {
  if (bytes[0] === 0xef /* a BOM */ || find(bytes, CR) !== -1 || find(bytes, ERROR_KEY) !== -1) return null;
  const usage = onlyUsageObject(bytes);
  if (usage === null) return null;
  const before = findLast(bytes, BLANK_LINE, usage.at);
  const start = before === -1 ? 0 : before + 2;
  // One line, `data:`, then the event's blank line: the parser's data is that line's value, nothing else; and no
  // `"usage"` key before this one in it (the tap reads the first).
  const blank = find(bytes, LF, start);
  if (blank === -1 || bytes[blank + 1] !== LF || usage.value >= blank || usage.keyBefore >= start) return null;
  if (DATA.compare(bytes, start, start + 5) !== 0) return null;
  const valueStart = bytes[start + 5] === 0x20 ? start + 6 : start + 5;
  let stated: TapResult["usage"];
  try {
    stated = fromChatUsage(JSON.parse(dataText.decode(bytes.subarray(valueStart, blank))).usage);
  } catch {
    return null;
  }
  if (!stated) return null;
  const tapped: TapResult = { usage: stated, failed: false, completed: true, outputCharsSoFar: 0 };
  if (!strip || !isUsageOnlyData(bytes, valueStart, blank)) return { bytes, tapped };
  const end = blank + 2;
  bytes.copyWithin(start, end);
  return { bytes: bytes.subarray(0, bytes.length - (end - start)), tapped };
}
