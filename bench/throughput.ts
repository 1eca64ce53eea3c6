// The load sections of a run, on targets already started: saturating throughput (wrk) in interleaved rounds with
// the CPU each request cost, latency at a fixed rate (bench/paced.ts), and sequential latency (bench/sequential.ts).

import { MODES, baseMode, type Mode, type Target } from "./modes";
import type { paced } from "./paced";
import type { Row } from "./report";
import type { SequentialLatency } from "./sequential";
import { median } from "./stats";
import { cpuMicros, memoryOf, runProbe, SCRATCH } from "./targets";
import { runWrk, type WrkResult } from "./wrk";

export interface LoadParams {
  connections: number;
  rounds: number;
  seconds: number;
  warmup: number;
  /** the latency probe's total rate (agent: a fifth of it), connections and duration */
  rate: number;
  pacedConnections: number;
  latencySeconds: number;
}

/** Agent requests are ~1,500 times larger: at the short requests' rate the probe would measure queueing. */
const rateOf = (p: LoadParams, mode: Mode) => (mode === "agent" ? p.rate / 5 : p.rate);

/** What one wrk run cost in CPU, µs per request, all threads: the target's process and the fake upstream's. */
interface CpuCost {
  target: number;
  upstream: number;
}

/** Every target once per mode per round (a slow spell of the machine hits all alike); then latency and memory. */
export async function measureThroughput(targets: Target[], upstreamPid: number, p: LoadParams): Promise<Row[]> {
  const cpu = new Map<string, CpuCost[]>();
  const runs = new Map<string, WrkResult[]>();
  const push = <T>(m: Map<string, T[]>, key: string, v: T) => (m.get(key) ?? m.set(key, []).get(key)!).push(v);
  const wrk = async (t: Target, mode: Mode, seconds: number) => {
    const before = { target: t.pid ? cpuMicros(t.pid) : NaN, upstream: cpuMicros(upstreamPid) };
    const r = await runWrk(t.req(mode), {
      connections: p.connections,
      seconds,
      scratch: SCRATCH,
      name: `${t.name.replace(" ", "-")}-${mode}`,
    });
    const perRequest = (after: number, was: number) => (r.requests ? (after - was) / r.requests : NaN);
    push(cpu, `${t.name}|${mode}`, {
      target: t.pid ? perRequest(cpuMicros(t.pid), before.target) : NaN,
      upstream: perRequest(cpuMicros(upstreamPid), before.upstream),
    });
    return r;
  };
  for (const t of targets) for (const mode of t.modes) await wrk(t, mode, p.warmup);
  cpu.clear(); // warm-up runs include JIT compilation
  for (let round = 0; round < p.rounds; round++) {
    for (const mode of MODES)
      for (const t of targets.filter((t) => t.modes.includes(mode)))
        push(runs, `${t.name}|${mode}`, await wrk(t, mode, p.seconds));
    const last = (t: Target) => t.modes.map((m) => runs.get(`${t.name}|${m}`)!.at(-1)!.rps.toFixed(0)).join("/");
    console.log(`round ${round + 1}/${p.rounds}: ` + targets.map((t) => `${t.name} ${last(t)}`).join(", "));
  }
  const rows: Row[] = [];
  for (const t of targets) {
    for (const mode of t.modes) {
      const rounds = runs.get(`${t.name}|${mode}`)!;
      const mid = [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)]!;
      const lat = await runProbe<Awaited<ReturnType<typeof paced>>>("paced.ts", {
        ...t.req(mode),
        connections: p.pacedConnections,
        rate: rateOf(p, mode),
        seconds: p.latencySeconds,
      });
      const costs = cpu.get(`${t.name}|${mode}`) ?? [];
      const cpuUs = { target: median(costs.map((c) => c.target)), upstream: median(costs.map((c) => c.upstream)) };
      rows.push({
        target: t.name,
        mode,
        wrk: mid,
        rounds: rounds.map((r) => r.rps),
        lat,
        mem: t.pid ? memoryOf(t.pid) : null,
        cpuUs,
      });
      console.log(
        `${t.name.padEnd(11)} ${mode.padEnd(10)} ${mid.rps.toFixed(0).padStart(6)} rps  p50 ${lat.p50.toFixed(2)} ms  p99 ${lat.p99.toFixed(2)} ms  errors ${mid.non2xx + mid.errors + lat.errors}`,
      );
    }
  }
  return rows;
}

export interface SequentialRow extends SequentialLatency {
  target: string;
  mode: string;
  /** direct's latency in the same pass (for translated: direct's stream, the same upstream call) */
  direct: { p50: number; p99: number };
}

/**
 * One request at a time per mode, interleaved with direct: the bare proxy and the gateway in one pass, Portkey in
 * a pass of its own (its streams take ~25 ms, and a long idle before a request slows whichever comes next: in one
 * pass they would tax the other targets' latency). `iterations` rounds per pass; the agent's a third as many.
 */
export async function measureSequential(targets: Target[], iterations: number): Promise<SequentialRow[]> {
  const rows: SequentialRow[] = [];
  const direct = targets.find((t) => t.name === "direct")!;
  for (const mode of MODES) {
    const serving = targets.filter((t) => t.name !== "direct" && t.modes.includes(mode));
    const passes = [serving.filter((t) => t.name !== "portkey"), serving.filter((t) => t.name === "portkey")].filter(
      (p) => p.length,
    );
    const n = mode === "agent" ? Math.ceil(iterations / 3) : iterations;
    for (const pass of passes) {
      const entries = [
        { label: "direct", req: direct.req(baseMode(mode) as Mode) },
        ...pass.map((t) => ({ label: t.name, req: t.req(mode) })),
      ];
      const out = await runProbe<Record<string, SequentialLatency>>("sequential.ts", {
        entries,
        iterations: n,
        warmup: Math.min(50, n),
      });
      const base = { p50: out.direct!.p50, p99: out.direct!.p99 };
      for (const t of pass) rows.push({ target: t.name, mode, ...out[t.name]!, direct: base });
      console.log(
        `sequential ${mode}: ` +
          Object.entries(out)
            .map(([t, l]) => `${t} ${l.p50.toFixed(2)} ms`)
            .join(", "),
      );
    }
  }
  return rows;
}
