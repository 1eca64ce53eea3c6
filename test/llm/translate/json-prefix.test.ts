// JsonObjectPrefix (translate/json-prefix.ts) against JSON.parse: a whole object passes whole and needs no closing;
// every prefix of one is a valid prefix whose closing makes an object; any text is cut where it stops being a prefix,
// and what was kept plus the closing always parses as an object.
import { expect, test } from "bun:test";
import { JsonObjectPrefix } from "../../../src/llm/translate/json-prefix";

let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;

function value(depth: number): unknown {
  const r = rand();
  if (depth > 3 || r < 0.45)
    return pick<unknown>([
      0,
      -1,
      12.5,
      -0.25e-3,
      1e21,
      7,
      true,
      false,
      null,
      "",
      "Paris",
      'q"uote\\back',
      "tab\there\nline",
      "é ✓ 😀 \u0001",
    ]);
  if (r < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
  return object(depth + 1);
}
function object(depth: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 4); i > 0; i--) o[pick(["city", "days", "", 'k"ey', "x"]) + i] = value(depth);
  return o;
}
const texts = Array.from({ length: 400 }, () => JSON.stringify(object(0), null, rand() < 0.3 ? 2 : undefined));

function parsesAsObject(text: string): boolean {
  const v = JSON.parse(text);
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

test("a whole object, fed in random pieces, is never cut and needs no closing", () => {
  for (const text of texts) {
    const p = new JsonObjectPrefix();
    for (let i = 0; i < text.length; ) {
      const n = 1 + Math.floor(rand() * 8);
      expect(p.feed(text.slice(i, i + n))).toBe(Math.min(n, text.length - i));
      i += n;
    }
    expect(p.closing()).toBe("");
  }
});

test("every prefix of an object is kept whole, and its closing makes it an object", () => {
  for (const text of texts.slice(0, 120))
    for (let end = 0; end <= text.length; end++) {
      const p = new JsonObjectPrefix();
      expect(p.feed(text.slice(0, end))).toBe(end);
      expect(parsesAsObject(text.slice(0, end) + p.closing())).toBe(true);
    }
});

test("any text is cut where it stops being an object's prefix; what was kept plus the closing is an object", () => {
  const noise = ["P", "}", "]", ",", ":", '"', "\\", "x", "\u0000", "\n", "-", ".", "e", "{", "[", "tru", "nul"];
  const mutated = texts.map((t) => {
    const at = Math.floor(rand() * (t.length + 1));
    return t.slice(0, at) + pick(noise) + t.slice(at + (rand() < 0.5 ? 1 : 0));
  });
  for (const text of [...mutated, '{"city": Paris}', "[1]", '"x"', "{}{}", "{} x", "  ", "", '{"a":1,}', '{"a":01}']) {
    const p = new JsonObjectPrefix();
    const kept = p.feed(text);
    expect(parsesAsObject(text.slice(0, kept) + p.closing())).toBe(true);
    // Cut only where the text could not go on: the kept part plus the next character is no longer a prefix.
    if (kept < text.length) expect(new JsonObjectPrefix().feed(text.slice(0, kept + 1))).toBe(kept);
  }
});

test("examples: what a broken call becomes", () => {
  const closed = (text: string) => {
    const p = new JsonObjectPrefix();
    return JSON.parse(text.slice(0, p.feed(text)) + p.closing());
  };
  expect(closed('{"city": Paris}')).toEqual({ city: null });
  expect(closed('{"city": "Pa')).toEqual({ city: "Pa" });
  expect(closed('{"days": [1, 2')).toEqual({ days: [1, 2] });
  expect(closed('{"n": -')).toEqual({ n: -0 });
  expect(closed('{"a": 1, ')).toEqual({ a: 1, "": null });
  expect(closed('{"s": "\\u00')).toEqual({ s: "\u0000" });
  expect(closed("not json")).toEqual({});
  expect(closed("")).toEqual({});
});
