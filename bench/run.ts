// `bun run bench`: one run, one machine, four targets on the same fake upstream (--fast: answers at once):
//   direct      → the fake itself
//   bare proxy  → a Bun proxy with no logic (bench/bare-proxy.ts): the floor the runtime sets
//   switchyard  → this gateway (SQLite, in-process limits, full metering: hold, tap, settle, usage record)
//   portkey     → Portkey's open-source gateway on Bun (x-portkey-provider: openai, x-portkey-custom-host)
// Chat completions in three modes: json (a short request, answered whole), stream (the same, streamed) and agent (a
// coding agent's request of ~180 KB, bench/agent-body.ts, streamed); and, on the gateway alone, translated: the
// stream's request as Anthropic Messages on the same chat-completions model, which the gateway translates both ways
// (its CPU per call against the native stream's). All targets are started first and stay up.
//   throughput  wrk, 1 thread, 64 connections, saturating, in BENCH_REPEATS interleaved rounds (default 5) of
//               BENCH_SECONDS (default 4 s) after a 2 s warm-up per target and mode: each round runs every target
//               once per mode, so a slow spell of the shared machine hits all of them alike. A target's rps is the
//               median of its rounds; "vs portkey" is the median of the per-round ratios (each pair measured within
//               seconds of each other), and every round's ratio is listed
//   latency     bench/paced.ts, 64 connections at a fixed total rate (BENCH_RATE, default 1000/s; agent requests
//               at a fifth of it), so latency is the cost of a request rather than queueing; added latency =
//               target − direct, per percentile
//   memory      the gateway's resident set after its runs (and its peak)
//   CPU         per request, all threads, from /proc: the gateway's and the fake upstream's (median of the rounds)
// Writes BENCHMARKS.md. Options: --quick (1 round of 2 s), --no-portkey.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { paced } from "./paced.ts";
import { cpuMicros, ensurePortkey, machine, memoryOf, ROOT, SCRATCH, startBareProxy, startFake, startPortkey, startSwitchyard, type Proc } from "./targets.ts";
import { haveWrk, runWrk, type Request, type WrkResult } from "./wrk.ts";
import { renderReport, type Row } from "./report.ts";
import { agentBody } from "./agent-body.ts";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const SECONDS = Number(process.env.BENCH_SECONDS ?? (quick ? 2 : 4));
const REPEATS = Number(process.env.BENCH_REPEATS ?? (quick ? 1 : 5));
const WARMUP = quick ? 1 : 2;
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const CONNECTIONS = 64;
const LATENCY_SECONDS = quick ? 2 : 5;
const MODES = ["json", "stream", "agent", "translated"] as const;
type Mode = (typeof MODES)[number];
/** The modes every target serves; only the gateway translates. */
const PROXY_MODES: readonly Mode[] = ["json", "stream", "agent"];

const short = (stream: boolean) =>
  JSON.stringify({ model: "gpt-5.2", max_completion_tokens: 256, ...(stream && { stream: true }), messages: [{ role: "user", content: "Say hello." }] });
const translated = JSON.stringify({ model: "gpt-5.2", max_tokens: 256, stream: true, messages: [{ role: "user", content: "Say hello." }] });
const BODIES: Record<Mode, string> = { json: short(false), stream: short(true), agent: agentBody(), translated };
const body = (mode: Mode) => BODIES[mode];
/** Agent requests are ~1,500 times larger: at the short requests' rate the probe would measure queueing. */
const rateOf = (mode: Mode) => (mode === "agent" ? RATE / 5 : RATE);

interface Target {
  name: string;
  req(mode: Mode): Request;
  pid: number | null;
  modes: readonly Mode[];
}

/** What one wrk run cost in CPU, µs per request, all threads: the target's process and the fake upstream's. */
interface CpuCost { target: number; upstream: number }

/** Every target once per mode per round; then latency and memory per target. */
async function measureAll(targets: Target[], upstreamPid: number): Promise<Row[]> {
  const cpu = new Map<string, CpuCost[]>();
  const wrk = async (t: Target, mode: Mode, seconds: number) => {
    const before = { target: t.pid ? cpuMicros(t.pid) : NaN, upstream: cpuMicros(upstreamPid) };
    const r = await runWrk(t.req(mode), { connections: CONNECTIONS, seconds, scratch: SCRATCH, name: `${t.name.replace(" ", "-")}-${mode}` });
    const perRequest = (after: number, was: number) => (r.requests ? (after - was) / r.requests : NaN);
    const cost = { target: t.pid ? perRequest(cpuMicros(t.pid), before.target) : NaN, upstream: perRequest(cpuMicros(upstreamPid), before.upstream) };
    const key = `${t.name}|${mode}`;
    (cpu.get(key) ?? cpu.set(key, []).get(key)!).push(cost);
    return r;
  };
  for (const t of targets) for (const mode of t.modes) await wrk(t, mode, WARMUP);
  cpu.clear(); // warm-up runs include JIT compilation
  const runs = new Map<string, WrkResult[]>();
  for (let round = 0; round < REPEATS; round++) {
    for (const mode of MODES) {
      for (const t of targets.filter((t) => t.modes.includes(mode))) {
        const r = await wrk(t, mode, SECONDS);
        (runs.get(`${t.name}|${mode}`) ?? runs.set(`${t.name}|${mode}`, []).get(`${t.name}|${mode}`)!).push(r);
      }
    }
    console.log(`round ${round + 1}/${REPEATS}: ` + targets.map((t) => `${t.name} ${t.modes.map((m) => runs.get(`${t.name}|${m}`)!.at(-1)!.rps.toFixed(0)).join("/")}`).join(", "));
  }
  const rows: Row[] = [];
  for (const t of targets) {
    for (const mode of t.modes) {
      const rounds = runs.get(`${t.name}|${mode}`)!;
      const median = [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)]!;
      const lat = await runPaced(t.req(mode), rateOf(mode));
      const costs = cpu.get(`${t.name}|${mode}`) ?? [];
      const cpuUs = { target: medianOf(costs.map((c) => c.target)), upstream: medianOf(costs.map((c) => c.upstream)) };
      rows.push({ target: t.name, mode, wrk: median, rounds: rounds.map((r) => r.rps), lat, mem: t.pid ? memoryOf(t.pid) : null, cpuUs });
      console.log(`${t.name.padEnd(11)} ${mode.padEnd(6)} ${median.rps.toFixed(0).padStart(6)} rps  p50 ${lat.p50.toFixed(2)} ms  p99 ${lat.p99.toFixed(2)} ms  ttfb ${lat.ttfb50.toFixed(2)} ms  non2xx ${rounds.reduce((a, r) => a + r.non2xx, 0)}`);
    }
  }
  return rows;
}

const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function runPaced(r: Request, rate: number) {
  // A process of its own, so the probe's work is not the runner's and its event loop is not shared. The spec goes
  // in a file: an agent body is larger than one command-line argument may be.
  const spec = join(SCRATCH, "paced-spec.json");
  writeFileSync(spec, JSON.stringify({ ...r, connections: CONNECTIONS, rate, seconds: LATENCY_SECONDS }));
  const p = Bun.spawn(["bun", join(ROOT, "bench/paced.ts"), spec], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  try {
    return JSON.parse(out) as Awaited<ReturnType<typeof paced>>;
  } catch {
    throw new Error(`latency probe failed: ${out}`);
  }
}

async function main() {
  if (!haveWrk()) {
    console.error("bench needs wrk (Debian: apt-get install wrk)");
    process.exit(1);
  }
  const notes: string[] = [];
  const fake = await startFake(19100);
  const procs: Proc[] = [fake];
  let rows: Row[];
  try {
    const targets: Target[] = [
      { name: "direct", pid: null, modes: PROXY_MODES, req: (mode) => ({ url: `${fake.url}/v1/chat/completions`, headers: { "content-type": "application/json", authorization: "Bearer sk-bench" }, body: body(mode) }) },
    ];
    const bare = await startBareProxy(19150, fake.url);
    procs.push(bare);
    targets.push({ name: "bare proxy", pid: bare.proc.pid, modes: PROXY_MODES, req: (mode) => ({ url: `${bare.url}/v1/chat/completions`, headers: { "content-type": "application/json" }, body: body(mode) }) });
    const sy = await startSwitchyard(19200, fake.url);
    procs.push(sy);
    targets.push({
      name: "switchyard",
      pid: sy.proc.pid,
      modes: MODES,
      req: (mode): Request =>
        mode === "translated"
          ? { url: `${sy.url}/v1/messages`, headers: { "content-type": "application/json", "x-api-key": sy.key, "anthropic-version": "2023-06-01" }, body: body(mode) }
          : { url: `${sy.url}/v1/chat/completions`, headers: { "content-type": "application/json", authorization: `Bearer ${sy.key}` }, body: body(mode) },
    });
    if (!args.includes("--no-portkey")) {
      const pk = ensurePortkey();
      if ("skipped" in pk) notes.push(`Portkey not measured: ${pk.skipped}`);
      else {
        const p = await startPortkey(pk.entry, 19300);
        procs.push(p);
        targets.push({
          name: "portkey",
          pid: p.proc.pid,
          modes: PROXY_MODES,
          req: (mode) => ({
            url: `${p.url}/v1/chat/completions`,
            headers: { "content-type": "application/json", authorization: "Bearer sk-bench", "x-portkey-provider": "openai", "x-portkey-custom-host": `${fake.url}/v1` },
            body: body(mode),
          }),
        });
      }
    }
    rows = await measureAll(targets, fake.proc.pid);
  } finally {
    for (const p of procs) await p.stop().catch(() => {});
  }
  const report = renderReport({ machine: machine(), rows, notes, seconds: SECONDS, repeats: REPEATS, warmup: WARMUP, rate: RATE, connections: CONNECTIONS, latencySeconds: LATENCY_SECONDS });
  if (!quick) writeFileSync(join(ROOT, "BENCHMARKS.md"), report);
  console.log("\n" + report);
}

await main();
