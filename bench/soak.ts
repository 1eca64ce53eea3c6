// The soak: a fresh gateway in front of bench/dribble-upstream.ts under mixed traffic at a fixed rate for `minutes`,
// its resident memory sampled every few seconds. A gateway that keeps something per call grows in proportion to
// the calls, so the slope of RSS over the second half (the first is warm-up: JIT, pools, caches filling) says
// whether it leaks. The rate is fixed and well below saturation, so the result does not depend on what else runs.

import { agentBody } from "./agent-body";
import { floors, soakSlope } from "./stats";
import { memoryOf, startDribble, startSwitchyard, type LedgerState } from "./targets";

export interface SoakParams {
  minutes: number;
  /** requests per second, all kinds together */
  rate: number;
}

export interface SoakRun extends SoakParams {
  sampleMs: number;
  samples: { atMs: number; rssMb: number }[];
  /** least squares over the second half: of every sample, and of each window's lowest (the verdict's) */
  slopeMbPerMin: number;
  floorSlopeMbPerMin: number;
  floorWindowMs: number;
  sent: Record<string, number>;
  errors: number;
  ledger: LedgerState;
}

// One cycle of twenty calls: mostly short calls, some agent turns and translated streams, one client that goes
// away after the first event of a slow stream (the gateway must cancel upstream and void or charge it, once).
const CYCLE = [
  "json",
  "stream",
  "translated",
  "json",
  "stream",
  "json",
  "agent",
  "stream",
  "translated",
  "json",
  "stream",
  "json",
  "abort",
  "stream",
  "translated",
  "json",
  "agent",
  "stream",
  "translated",
  "json",
] as const;
type Kind = (typeof CYCLE)[number];

export async function soak(p: SoakParams): Promise<SoakRun> {
  const upstream = await startDribble(19450);
  const sy = await startSwitchyard(19260, upstream.url).catch(async (e) => {
    await upstream.stop();
    throw e;
  });
  const chat = {
    url: `${sy.url}/v1/chat/completions`,
    headers: { "content-type": "application/json", authorization: `Bearer ${sy.key}` },
  };
  const messages = {
    url: `${sy.url}/v1/messages`,
    headers: { "content-type": "application/json", "x-api-key": sy.key, "anthropic-version": "2023-06-01" },
  };
  const short = (content: string, stream: boolean) =>
    JSON.stringify({ model: "gpt-5.2", max_completion_tokens: 256, stream, messages: [{ role: "user", content }] });
  const requests: Record<Kind, { url: string; headers: Record<string, string>; body: string }> = {
    json: { ...chat, body: short("Say hello.", false) },
    stream: { ...chat, body: short("Say hello.", true) },
    agent: { ...chat, body: agentBody() },
    translated: {
      ...messages,
      body: JSON.stringify({
        model: "gpt-5.2",
        max_tokens: 256,
        stream: true,
        messages: [{ role: "user", content: "Say hello." }],
      }),
    },
    abort: { ...chat, body: short("dribble 20x100", true) },
  };
  const sent: Record<string, number> = {};
  let errors = 0;
  async function call(kind: Kind) {
    sent[kind] = (sent[kind] ?? 0) + 1;
    const r = requests[kind];
    const controller = new AbortController();
    try {
      const res = await fetch(r.url, { method: "POST", headers: r.headers, body: r.body, signal: controller.signal });
      if (res.status !== 200) errors++;
      if (kind !== "abort") return void (await res.arrayBuffer());
      await res.body!.getReader().read();
      controller.abort();
    } catch (e) {
      if (kind !== "abort" || (e as Error).name !== "AbortError") errors++;
    }
  }

  // Often enough that each window below holds several collections' lows: the floor is read from them.
  const sampleMs = Math.min(2000, Math.max(1000, (p.minutes * 60_000) / 300));
  const samples: SoakRun["samples"] = [];
  const t0 = performance.now();
  const sample = () => {
    const m = memoryOf(sy.proc.pid);
    samples.push({ atMs: Math.round(performance.now() - t0), rssMb: Math.round(m.rssMb * 10) / 10 });
  };
  const sampler = setInterval(sample, sampleMs);
  const inFlight = new Set<Promise<void>>();
  const interval = 1000 / p.rate;
  const until = t0 + p.minutes * 60_000;
  let next = t0;
  try {
    for (let k = 0; next < until; k++) {
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      next += interval;
      const c = call(CYCLE[k % CYCLE.length]!);
      inFlight.add(c);
      void c.finally(() => inFlight.delete(c));
      if (k % (p.rate * 60) === 0 && k)
        console.log(
          `soak: ${Math.round((performance.now() - t0) / 60_000)} min, RSS ${samples.at(-1)?.rssMb.toFixed(0)} MB`,
        );
    }
    await Promise.all(inFlight);
    sample();
  } finally {
    clearInterval(sampler);
  }
  const runMs = p.minutes * 60_000;
  // A few collections per window: the gateway's RSS saws with a period of ten to twenty seconds under this load.
  const floorWindowMs = Math.max(15 * sampleMs, runMs / 20);
  const ledger = await sy.stopAndCheck();
  await upstream.stop();
  return {
    ...p,
    sampleMs,
    samples,
    slopeMbPerMin: soakSlope(samples, runMs),
    floorSlopeMbPerMin: soakSlope(floors(samples, floorWindowMs), runMs),
    floorWindowMs,
    sent,
    errors,
    ledger,
  };
}
