// The sequential latency probe, run as its own process (bun bench/sequential.ts <spec file>): one request at a time,
// the targets taking turns (the order rotating each round, so none always follows the same neighbour), each timed
// to its last byte. With nothing queued, the difference to direct is what a gateway adds to one call. Prints one
// JSON line: per label, the sorted latencies' p50/p99 and the count.

import { percentile } from "./stats";
import type { Request } from "./wrk";

interface Spec {
  entries: { label: string; req: Request }[];
  iterations: number;
  /** rounds run first and not counted (JIT, connection set-up) */
  warmup: number;
}

export interface SequentialLatency {
  n: number;
  errors: number;
  p50: number;
  p99: number;
}

async function once(r: Request): Promise<number | null> {
  const t0 = performance.now();
  try {
    const res = await fetch(r.url, { method: "POST", headers: r.headers, body: r.body });
    await res.arrayBuffer();
    return res.status === 200 ? performance.now() - t0 : null;
  } catch {
    return null;
  }
}

export async function sequential(spec: Spec): Promise<Record<string, SequentialLatency>> {
  const times = new Map(spec.entries.map((e) => [e.label, [] as number[]]));
  const errors = new Map(spec.entries.map((e) => [e.label, 0]));
  const count = spec.entries.length;
  for (let round = 0; round < spec.warmup + spec.iterations; round++) {
    for (let k = 0; k < count; k++) {
      const e = spec.entries[(round + k) % count]!;
      const ms = await once(e.req);
      if (round < spec.warmup) continue;
      if (ms === null) errors.set(e.label, errors.get(e.label)! + 1);
      else times.get(e.label)!.push(ms);
    }
  }
  const out: Record<string, SequentialLatency> = {};
  for (const [label, xs] of times) {
    xs.sort((a, b) => a - b);
    out[label] = { n: xs.length, errors: errors.get(label)!, p50: percentile(xs, 50), p99: percentile(xs, 99) };
  }
  return out;
}

if (import.meta.main) {
  console.log(JSON.stringify(await sequential(JSON.parse(await Bun.file(process.argv[2]!).text()))));
}
