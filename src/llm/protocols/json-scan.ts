// Cheap looks into compact JSON text without parsing it, for the stream taps: most events only need "is this the
// usage event?" or "how long is this delta?", and a full JSON.parse per delta is the cost the hot path avoids.
//
// Soundness: inside a JSON string every `"` is escaped, so `"key"` followed by `:` can only be an object key.
// The key may appear at any depth; callers only use keys that are unambiguous in their event.

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Index of the first character of the value of the first `"key": value` at or after `from`, or -1. */
export function findValue(text: string, quotedKey: string, from = 0): number {
  let i = text.indexOf(quotedKey, from);
  while (i !== -1) {
    let j = i + quotedKey.length;
    while (isSpace(text.charCodeAt(j))) j++;
    if (text.charCodeAt(j) === 0x3a /* : */) {
      j++;
      while (isSpace(text.charCodeAt(j))) j++;
      return j;
    }
    i = text.indexOf(quotedKey, i + 1);
  }
  return -1;
}

/**
 * Decoded length (JS string length) of the JSON string starting at `start` (its opening quote), and the index
 * just after its closing quote. An escape counts as the one character it stands for.
 */
export function stringLengthAt(text: string, start: number): { length: number; end: number } {
  let n = 0;
  let i = start + 1;
  const len = text.length;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) return { length: n, end: i + 1 };
    if (c === 0x5c /* \ */) i += text.charCodeAt(i + 1) === 0x75 /* u */ ? 6 : 2;
    else i++;
    n++;
  }
  return { length: n, end: len };
}

/**
 * Sum over every value of `"key"` in the text of what `measure` makes of it: its length and where it ends, or null
 * to skip a value of another kind.
 */
function sumValues(
  text: string,
  quotedKey: string,
  measure: (text: string, at: number) => { length: number; end: number } | null,
): number {
  let total = 0;
  let from = 0;
  for (;;) {
    const at = findValue(text, quotedKey, from);
    if (at === -1) return total;
    const measured = measure(text, at);
    total += measured?.length ?? 0;
    from = measured?.end ?? at;
  }
}

/** Sum of decoded lengths of every string value of `"key"` in the text (non-string values are skipped). */
export function sumStringValues(text: string, quotedKey: string): number {
  return sumValues(text, quotedKey, (t, v) => (t.charCodeAt(v) === 0x22 ? stringLengthAt(t, v) : null));
}

/** The string value of the first `"key"` (unescaped only if it has no escapes; used for short type names). */
export function shortStringValue(text: string, quotedKey: string): string | undefined {
  const at = findValue(text, quotedKey);
  if (at === -1 || text.charCodeAt(at) !== 0x22) return undefined;
  const end = text.indexOf('"', at + 1);
  return end === -1 ? undefined : text.slice(at + 1, end);
}

/** Whether the first `"key"` has an object value (`"usage":{` yes, `"usage":null` no). */
export function hasObjectValue(text: string, quotedKey: string): boolean {
  const at = findValue(text, quotedKey);
  return at !== -1 && text.charCodeAt(at) === 0x7b /* { */;
}

/** Index just past the object or array starting at `start` (a `{` or `[`), string-aware; -1 if unterminated. */
export function objectEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Sum of the raw text lengths of every object value of `"key"` (Anthropic's tool_use `input`); others skipped. */
export function sumObjectValues(text: string, quotedKey: string): number {
  return sumValues(text, quotedKey, (t, v) => {
    const end = t.charCodeAt(v) === 0x7b ? objectEnd(t, v) : -1;
    return end === -1 ? null : { length: end - v, end };
  });
}
