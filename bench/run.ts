// `bun run bench`: direct, a bare Bun proxy, Switchyard and Portkey on one fake upstream, measured in one run
// (throughput in interleaved rounds, latency under load, sequential latency), then Switchyard holding 1,000 slow
// streams open; writes BENCHMARKS.md with a verdict per target (BENCHMARKS.md's Method says how each is measured).
// `bun run bench --soak [--soak-minutes N] [--soak-rate R]`: the soak alone, written into the same file.
// Options: --quick (a 1–2 minute look, nothing written), --no-portkey, --streams N (0: none), --sequential N,
// --only-streams (the open-streams section alone, printed and not written: memory work needs no throughput run).

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bodyOf, PROXY_MODES, MODES, type Target } from "./modes";
import { readRecord, stamp, type BenchRecord } from "./record";
import { renderReport } from "./report";
import { soak } from "./soak";
import { measureOpenStreams } from "./streams";
import {
  ensurePortkey,
  machine,
  ROOT,
  startBareProxy,
  startFake,
  startPortkey,
  startSwitchyard,
  type Proc,
} from "./targets";
import { measureSequential, measureThroughput, type LoadParams } from "./throughput";
import { haveWrk } from "./wrk";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  const v = at === -1 ? fallback : Number(args[at + 1]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} takes a number`);
  return v;
};
const quick = args.includes("--quick");
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const LOAD: LoadParams = {
  connections: 32,
  rounds: env("BENCH_REPEATS", quick ? 1 : 3),
  seconds: env("BENCH_SECONDS", quick ? 2 : 5),
  warmup: quick ? 1 : 2,
  rate: env("BENCH_RATE", 1000),
  // issue 3's latency bounds were set at 64 connections
  pacedConnections: 64,
  latencySeconds: quick ? 2 : 5,
};
const SEQUENTIAL = option("--sequential", quick ? 100 : 600);
const STREAMS = option("--streams", quick ? 200 : 1000);
const FILE = join(ROOT, "BENCHMARKS.md");

async function startTargets(procs: Proc[], notes: string[]): Promise<{ targets: Target[]; upstreamPid: number }> {
  const fake = await startFake(19100);
  procs.push(fake);
  const chat = (url: string, headers: Record<string, string>) => (mode: (typeof MODES)[number]) => ({
    url: `${url}/v1/chat/completions`,
    headers: { "content-type": "application/json", ...headers },
    body: bodyOf(mode),
  });
  const targets: Target[] = [
    { name: "direct", pid: null, modes: PROXY_MODES, req: chat(fake.url, { authorization: "Bearer sk-bench" }) },
  ];
  const bare = await startBareProxy(19150, fake.url);
  procs.push(bare);
  targets.push({ name: "bare proxy", pid: bare.proc.pid, modes: PROXY_MODES, req: chat(bare.url, {}) });
  const sy = await startSwitchyard(19200, fake.url);
  procs.push(sy);
  const syChat = chat(sy.url, { authorization: `Bearer ${sy.key}` });
  const syMessages = {
    url: `${sy.url}/v1/messages`,
    headers: { "content-type": "application/json", "x-api-key": sy.key, "anthropic-version": "2023-06-01" },
  };
  targets.push({
    name: "switchyard",
    pid: sy.proc.pid,
    modes: MODES,
    req: (mode) => (mode === "translated" ? { ...syMessages, body: bodyOf(mode) } : syChat(mode)),
  });
  if (args.includes("--no-portkey")) return { targets, upstreamPid: fake.proc.pid };
  const pk = ensurePortkey();
  if ("skipped" in pk) {
    notes.push(`Portkey not measured: ${pk.skipped}`);
    console.error(notes.at(-1));
  } else {
    const p = await startPortkey(pk.entry, 19300);
    procs.push(p);
    targets.push({
      name: "portkey",
      pid: p.proc.pid,
      modes: PROXY_MODES,
      req: chat(p.url, {
        authorization: "Bearer sk-bench",
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": `${fake.url}/v1`,
      }),
    });
  }
  return { targets, upstreamPid: fake.proc.pid };
}

/** Replaces one part of the record BENCHMARKS.md carries and renders the file again. */
function write(update: (r: BenchRecord) => void, save: boolean) {
  const record = readRecord(existsSync(FILE) ? readFileSync(FILE, "utf8") : null);
  update(record);
  const report = renderReport(record);
  console.log("\n" + report.slice(0, report.lastIndexOf("<!-- bench-data")));
  if (save) writeFileSync(FILE, report);
  else console.log("(a quick or short run: BENCHMARKS.md left as it was)");
}

async function onlyStreams() {
  const streams = await measureOpenStreams({ streams: STREAMS, events: quick ? 10 : 20, gapMs: quick ? 300 : 500 });
  console.log(JSON.stringify({ idleRssMb: streams.idleRssMb, ...streams.result, ledger: streams.ledger }, null, 1));
}

async function main() {
  if (!haveWrk()) {
    console.error("bench needs wrk (Debian: apt-get install wrk)");
    process.exit(1);
  }
  const notes: string[] = [];
  const procs: Proc[] = [];
  const started = performance.now();
  const measuredOn = stamp(machine()); // the tree as it was measured, not as it is when the run ends
  let rows, sequential;
  try {
    const { targets, upstreamPid } = await startTargets(procs, notes);
    rows = await measureThroughput(targets, upstreamPid, LOAD);
    sequential = await measureSequential(targets, SEQUENTIAL);
  } finally {
    for (const p of procs) await p.stop().catch(() => {});
  }
  const streams = STREAMS
    ? await measureOpenStreams({ streams: STREAMS, events: quick ? 10 : 20, gapMs: quick ? 300 : 500 })
    : null;
  console.log(`bench took ${((performance.now() - started) / 60_000).toFixed(1)} min`);
  write(
    (r) =>
      (r.main = {
        ...measuredOn,
        params: { ...LOAD, sequentialIterations: SEQUENTIAL },
        rows,
        sequential,
        streams,
        notes,
      }),
    !quick,
  );
}

async function soakMain() {
  const minutes = option("--soak-minutes", 10);
  const measuredOn = stamp(machine());
  const run = await soak({ minutes, rate: option("--soak-rate", 200) });
  // A soak shorter than the target's would replace a full one's result with a weaker one.
  write((r) => (r.soak = { ...measuredOn, ...run }), minutes >= 10);
}

await (args.includes("--soak") || args.includes("--soak-minutes")
  ? soakMain()
  : args.includes("--only-streams")
    ? onlyStreams()
    : main());
