// The latency probe, run as its own process (bun bench/paced.ts <file holding the JSON spec>): N connections, each sending
// its next request on a fixed schedule, so the total rate is fixed well below saturation. Latency then measures
// what a request costs in each path, not how long it queued — which is what "added latency" means. Per request:
// time to the first body byte (TTFB) and to the last. Prints one JSON line with percentiles.

import { percentile } from "./stats";

interface Spec {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  rate: number; // requests per second, all connections together
  seconds: number;
}

export async function paced(s: Spec) {
  const total: number[] = [];
  const ttfb: number[] = [];
  let errors = 0;
  const interval = (1000 * s.connections) / s.rate;
  const until = performance.now() + s.seconds * 1000;
  async function connection(offset: number) {
    let next = performance.now() + offset;
    while (next < until) {
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      next += interval;
      const t0 = performance.now();
      try {
        const res = await fetch(s.url, { method: "POST", headers: s.headers, body: s.body });
        const reader = res.body!.getReader();
        let first = true;
        for (;;) {
          const { done } = await reader.read();
          if (first && !done) {
            ttfb.push(performance.now() - t0);
            first = false;
          }
          if (done) break;
        }
        if (res.status !== 200) errors++;
        else total.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  }
  await Promise.all(Array.from({ length: s.connections }, (_, i) => connection((i * interval) / s.connections)));
  total.sort((a, b) => a - b);
  ttfb.sort((a, b) => a - b);
  return {
    n: total.length,
    errors,
    p50: percentile(total, 50),
    p99: percentile(total, 99),
    ttfb50: percentile(ttfb, 50),
    ttfb99: percentile(ttfb, 99),
  };
}

if (import.meta.main) {
  console.log(JSON.stringify(await paced(JSON.parse(await Bun.file(process.argv[2]!).text()))));
}
