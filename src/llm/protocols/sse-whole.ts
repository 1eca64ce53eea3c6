// A stream whose whole body is in before anything is sent (native.ts, answered in one piece) has its usage near the
// end. Decoding and parsing every event only to find it is most of the tap's cost, so the bytes are searched
// natively for what could change the verdict, and only the one event that states usage is decoded. Whenever the
// bytes leave any doubt that the tap would see the same (a CR, a BOM, an error key, more than one usage object, an
// event of another shape), the answer returns null and the caller goes through the tap as before.

import { fromChatUsage } from "../usage";
import { hasObjectValue } from "./json-scan";
import type { TapResult } from "./types";

const LF = 0x0a;
const CR = 0x0d;
const BLANK_LINE = Buffer.from("\n\n");
const DATA = Buffer.from("data:");
const ERROR_KEY = Buffer.from('"error"');
const USAGE_KEY = Buffer.from('"usage"');

// A BOM inside the data is kept, as the tap's decoder (which strips one only at the stream's start) keeps it.
const dataText = new TextDecoder("utf-8", { ignoreBOM: true });

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x09;

/**
 * Where the only object value of `"usage"` in the bytes starts, -1 when there is none, -2 when there are several.
 * A key followed by `{` in the raw bytes can only be a key (a string's quotes are escaped).
 */
function onlyUsageObject(buf: Buffer): number {
  let found = -1;
  for (let i = buf.indexOf(USAGE_KEY); i !== -1; i = buf.indexOf(USAGE_KEY, i + USAGE_KEY.length)) {
    let j = i + USAGE_KEY.length;
    while (isSpace(buf[j])) j++;
    if (buf[j] !== 0x3a /* : */) continue;
    j++;
    while (isSpace(buf[j])) j++;
    if (buf[j] !== 0x7b /* { */) continue;
    if (found !== -1) return -2;
    found = i;
  }
  return found;
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
 * of `"usage"` in a single-line `data:` event that parses and states usage (the last usage the tap would keep, and
 * the only event the strip could remove). `isTarget` is the strip's test (chat.ts isUsageOnlyEvent), or null when
 * the client asked for usage itself.
 */
export function wholeChatStream(bytes: Uint8Array, isTarget: ((event: string) => boolean) | null): WholeStream | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf[0] === 0xef /* a BOM */ || buf.indexOf(CR) !== -1 || buf.indexOf(ERROR_KEY) !== -1) return null;
  const at = onlyUsageObject(buf);
  if (at < 0) return null;
  const before = buf.lastIndexOf(BLANK_LINE, at);
  const start = before === -1 ? 0 : before + 2;
  const blank = buf.indexOf(BLANK_LINE, at);
  // One line, `data:`, then the event's blank line: the parser's data is that line's value, nothing else.
  if (blank === -1 || buf.indexOf(LF, start) !== blank || buf.compare(DATA, 0, 5, start, start + 5) !== 0) return null;
  const valueStart = buf[start + 5] === 0x20 ? start + 6 : start + 5;
  const data = dataText.decode(bytes.subarray(valueStart, blank));
  if (!hasObjectValue(data, '"usage"')) return null;
  let usage: TapResult["usage"];
  try {
    usage = fromChatUsage(JSON.parse(data).usage);
  } catch {
    return null;
  }
  if (!usage) return null;
  const tapped: TapResult = { usage, failed: false, completed: true, outputCharsSoFar: 0 };
  const end = blank + 2;
  // The strip's test sees the event's text; on `data:`, one line and the blank line around the data, it finds the
  // same keys and brackets in the data alone.
  if (!isTarget?.(data)) return { bytes, tapped };
  const out = new Uint8Array(bytes.length - (end - start));
  out.set(bytes.subarray(0, start), 0);
  out.set(bytes.subarray(end), start);
  return { bytes: out, tapped };
}
