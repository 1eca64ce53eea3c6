// `bun run bench`: one run, one machine, three targets on the same fake upstream (--fast: answers at once):
//   direct      → the fake itself
//   bare proxy  → a Bun proxy with no logic (bench/bare-proxy.ts): the floor the runtime sets
//   switchyard  → this gateway (SQLite, in-process limits, full metering: hold, tap, settle, usage record)
//   portkey     → Portkey's open-source gateway on Bun (x-portkey-provider: openai, x-portkey-custom-host)
// Chat completions, non-streaming and streaming. Per target and mode:
//   throughput  wrk, 1 thread, 64 connections, saturating: the median of BENCH_REPEATS runs (default 3) of
//               BENCH_SECONDS (default 5 s) after a 2 s warm-up, because one run on a shared machine moves ±20%
//   latency     bench/paced.ts, 64 connections at a fixed total rate (BENCH_RATE, default 1000/s), so latency is
//               the cost of a request rather than queueing; added latency = target − direct, per percentile
//   memory      the gateway's resident set after its runs (and its peak)
// Writes BENCHMARKS.md. Options: --quick (2 s runs), --no-portkey.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { paced } from "./paced.ts";
import { ensurePortkey, machine, memoryOf, ROOT, SCRATCH, startBareProxy, startFake, startPortkey, startSwitchyard, type Proc } from "./targets.ts";
import { haveWrk, runWrk, type Request, type WrkResult } from "./wrk.ts";
import { renderReport, type Row } from "./report.ts";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const SECONDS = Number(process.env.BENCH_SECONDS ?? (quick ? 2 : 5));
const REPEATS = Number(process.env.BENCH_REPEATS ?? (quick ? 1 : 3));
const WARMUP = quick ? 1 : 2;
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const CONNECTIONS = 64;
const LATENCY_SECONDS = quick ? 2 : 5;

const body = (stream: boolean) =>
  JSON.stringify({ model: "gpt-5.2", max_completion_tokens: 256, ...(stream && { stream: true }), messages: [{ role: "user", content: "Say hello." }] });

async function measure(name: string, target: string, req: (stream: boolean) => Request, pid: number | null): Promise<Row[]> {
  const rows: Row[] = [];
  for (const stream of [false, true]) {
    const r = req(stream);
    const mode = stream ? "stream" : "json";
    await runWrk(r, { connections: CONNECTIONS, seconds: WARMUP, scratch: SCRATCH, name: `${name}-${mode}` });
    const runs: WrkResult[] = [];
    for (let i = 0; i < REPEATS; i++) runs.push(await runWrk(r, { connections: CONNECTIONS, seconds: SECONDS, scratch: SCRATCH, name: `${name}-${mode}` }));
    const wrk = runs.sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
    const lat = await runPaced(r);
    rows.push({ target, mode, wrk, lat, mem: pid ? memoryOf(pid) : null });
    console.log(`${target.padEnd(11)} ${mode.padEnd(6)} ${wrk.rps.toFixed(0).padStart(6)} rps  p50 ${lat.p50.toFixed(2)} ms  p99 ${lat.p99.toFixed(2)} ms  ttfb ${lat.ttfb50.toFixed(2)} ms  non2xx ${wrk.non2xx}`);
  }
  return rows;
}

async function runPaced(r: Request) {
  // A process of its own, so the probe's work is not the runner's and its event loop is not shared.
  const spec = { ...r, connections: CONNECTIONS, rate: RATE, seconds: LATENCY_SECONDS };
  const p = Bun.spawn(["bun", join(ROOT, "bench/paced.ts"), JSON.stringify(spec)], { stdout: "pipe", stderr: "inherit" });
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
  const rows: Row[] = [];
  const notes: string[] = [];
  const fake = await startFake(19100);
  const procs: Proc[] = [fake];
  try {
    const direct = (stream: boolean): Request => ({ url: `${fake.url}/v1/chat/completions`, headers: { "content-type": "application/json", authorization: "Bearer sk-bench" }, body: body(stream) });
    rows.push(...(await measure("direct", "direct", direct, null)));

    const bare = await startBareProxy(19150, fake.url);
    procs.push(bare);
    const viaBare = (stream: boolean): Request => ({ url: `${bare.url}/v1/chat/completions`, headers: { "content-type": "application/json" }, body: body(stream) });
    rows.push(...(await measure("bare-proxy", "bare proxy", viaBare, bare.proc.pid)));
    await bare.stop();

    const sy = await startSwitchyard(19200, fake.url);
    procs.push(sy);
    const viaSy = (stream: boolean): Request => ({ url: `${sy.url}/v1/chat/completions`, headers: { "content-type": "application/json", authorization: `Bearer ${sy.key}` }, body: body(stream) });
    rows.push(...(await measure("switchyard", "switchyard", viaSy, sy.proc.pid)));
    await sy.stop();

    if (!args.includes("--no-portkey")) {
      const pk = ensurePortkey();
      if ("skipped" in pk) notes.push(`Portkey not measured: ${pk.skipped}`);
      else {
        const p = await startPortkey(pk.entry, 19300);
        procs.push(p);
        const viaPk = (stream: boolean): Request => ({
          url: `${p.url}/v1/chat/completions`,
          headers: { "content-type": "application/json", authorization: "Bearer sk-bench", "x-portkey-provider": "openai", "x-portkey-custom-host": `${fake.url}/v1` },
          body: body(stream),
        });
        rows.push(...(await measure("portkey", "portkey", viaPk, p.proc.pid)));
        await p.stop();
      }
    }
  } finally {
    for (const p of procs) await p.stop().catch(() => {});
  }
  const report = renderReport({ machine: machine(), rows, notes, seconds: SECONDS, repeats: REPEATS, warmup: WARMUP, rate: RATE, connections: CONNECTIONS, latencySeconds: LATENCY_SECONDS });
  if (!quick) writeFileSync(join(ROOT, "BENCHMARKS.md"), report);
  console.log("\n" + report);
}

await main();
