// Random JSON object texts from a seed (so a failure can be replayed): odd spacing, escapes, numbers JSON.parse
// reads in its own way, nesting, repeated and tricky keys. For holding a JSON reader against JSON.parse.

/** A small seeded generator, so a failure can be replayed. */
export function random(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), (s >>> 0) / 2 ** 32);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)]!;
  return { next, int, pick };
}
export type Random = ReturnType<typeof random>;

const SPACES = ["", "", " ", "\n", "\t", " \r\n "];
const CHARS = [
  "a",
  "z",
  "0",
  " ",
  "é",
  "漢",
  "😀",
  '"',
  "\\",
  "/",
  "\n",
  "\t",
  "\u0001",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  "\u2028",
];

/** A JSON string literal, its characters written plainly or as escapes. */
function stringText(r: Random, length: number): string {
  let out = '"';
  for (let i = 0; i < length; i++) {
    const c = r.pick(CHARS);
    const plain = JSON.stringify(c).slice(1, -1);
    out +=
      r.next() < 0.3
        ? [...c]
            .map((ch) =>
              ch.length === 1
                ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`
                : JSON.stringify(ch).slice(1, -1),
            )
            .join("")
        : plain;
  }
  return out + '"';
}

const NUMBERS = ["0", "-0", "1", "-17", "3.25", "1e3", "-2.5E-7", "12345678901234567890", "0.1e+2", "9007199254740993"];

function valueText(r: Random, depth: number): string {
  const sp = () => r.pick(SPACES);
  const kind = depth > 4 ? r.int(4) : r.int(7);
  switch (kind) {
    case 0:
      return r.pick(NUMBERS);
    case 1:
      return r.pick(["true", "false", "null"]);
    case 2:
    case 3:
      return stringText(r, r.next() < 0.1 ? 400 + r.int(2000) : r.int(12));
    case 4:
    case 5: {
      const n = r.int(5);
      return "[" + sp() + Array.from({ length: n }, () => valueText(r, depth + 1)).join(sp() + "," + sp()) + sp() + "]";
    }
    default:
      return objectText(r, depth + 1);
  }
}

const KEYS = ["model", "stream", "max_tokens", "messages", "tools", "a", "", "mod\\u0065l", "__proto__", "0", "é"];

export function objectText(r: Random, depth: number): string {
  const sp = () => r.pick(SPACES);
  const n = r.int(depth === 0 ? 8 : 4);
  const members = Array.from(
    { length: n },
    () =>
      sp() + (r.next() < 0.7 ? `"${r.pick(KEYS)}"` : stringText(r, r.int(6))) + sp() + ":" + sp() + valueText(r, depth),
  );
  return "{" + members.join(",") + sp() + "}";
}
