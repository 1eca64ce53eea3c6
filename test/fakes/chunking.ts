// Cutting byte streams into chunks the way networks do: used by the fake upstream to write irregular streams and
// by the tap tests to feed every possible split. Seeded, so a failure can be replayed.

/** Mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pieces of 1..maxPiece bytes at arbitrary offsets (mid-line, mid-UTF-8 sequence, anywhere). */
export function randomPieces(bytes: Uint8Array, next: () => number, maxPiece = 64): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const n = 1 + Math.floor(next() * maxPiece);
    parts.push(bytes.subarray(at, at + n));
    at += n;
  }
  return parts;
}

/** One piece per SSE event (split after each blank line), as a fast upstream writes them. */
export function eventPieces(bytes: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 1; i < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i - 1] === 10) {
      parts.push(bytes.subarray(start, i + 1));
      start = i + 1;
    }
  }
  if (start < bytes.length) parts.push(bytes.subarray(start));
  return parts;
}

/** Every two-piece split (at each offset 0..n), every byte on its own, and `random` random multi-splits. */
export function* splits(bytes: Uint8Array, random = 100, seed = 7): Generator<Uint8Array[]> {
  for (let i = 0; i <= bytes.length; i++) yield [bytes.subarray(0, i), bytes.subarray(i)];
  yield Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
  const next = rng(seed);
  for (let k = 0; k < random; k++) yield randomPieces(bytes, next);
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
