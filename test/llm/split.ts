// Ways to cut a byte stream into chunks, for feeding taps the way a network would.

/** Mulberry32: small seeded PRNG so a failing random split can be reproduced from its seed. */
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

/** Every two-piece split (at each offset 0..n), every byte on its own, and `random` random multi-splits. */
export function* splits(bytes: Uint8Array, random = 100, seed = 7): Generator<Uint8Array[]> {
  for (let i = 0; i <= bytes.length; i++) yield [bytes.subarray(0, i), bytes.subarray(i)];
  yield Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
  const r = rng(seed);
  for (let k = 0; k < random; k++) {
    const parts: Uint8Array[] = [];
    let at = 0;
    while (at < bytes.length) {
      const n = 1 + Math.floor(r() * 64);
      parts.push(bytes.subarray(at, at + n));
      at += n;
    }
    yield parts;
  }
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
