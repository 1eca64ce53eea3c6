// Shared by the codecs' malformed-input tests: where a junk value can be put into a request or an answer.

/** Every path to a value inside `v` (objects and arrays), the root excluded, as key lists. */
export function paths(v: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof v !== "object" || v === null) return [];
  const out: Array<Array<string | number>> = [];
  for (const [k, child] of Object.entries(v)) {
    const p = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(p, ...paths(child, p));
  }
  return out;
}
