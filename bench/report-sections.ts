// The tables and lines of BENCHMARKS.md's sections, one function per section.

import { baseMode } from "./modes";
import type { MainRun, SoakRun, Stamp, StreamsSection } from "./record";
import { floors } from "./stats";
import { roundRatio, TARGETS } from "./verdicts";

const num = (n: number | null | undefined) => (typeof n === "number" && Number.isFinite(n) ? n : NaN);
const fixed = (n: number, digits = 2) => (Number.isFinite(num(n)) ? n.toFixed(digits) : "—");
const signed = (n: number) => (Number.isFinite(num(n)) ? (n >= 0 ? "+" : "") + n.toFixed(2) : "—");
const times = (n: number) => (Number.isFinite(num(n)) ? `${n.toFixed(2)}×` : "");

export function loadTables(m: MainRun): string[] {
  const direct = (mode: string) => m.rows.find((r) => r.target === "direct" && r.mode === baseMode(mode));
  const vs = (target: string, other: string, mode: string) =>
    target === other ? "" : times(roundRatio(m, target, other, mode).median);
  const lines = [
    "## Throughput and latency under load",
    "",
    "| target | mode | rps | vs bare | vs portkey | p50 ms | p99 ms | added p50 | added p99 | TTFB p50 | TTFB p99 | RSS MB | CPU µs | upstream µs | errors |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of m.rows) {
    const base = direct(r.mode);
    const noAdded = r.target === "direct" || base === undefined;
    const bare = r.target === "direct" ? "" : vs(r.target, "bare proxy", r.mode);
    lines.push(
      `| ${r.target} | ${r.mode} | ${fixed(r.wrk.rps, 0)} | ${bare} | ${vs(r.target, "portkey", r.mode)} | ${fixed(r.lat.p50)} | ${fixed(r.lat.p99)} | ` +
        `${noAdded ? "" : signed(r.lat.p50 - base!.lat.p50)} | ${noAdded ? "" : signed(r.lat.p99 - base!.lat.p99)} | ${fixed(r.lat.ttfb50)} | ${fixed(r.lat.ttfb99)} | ` +
        `${r.mem ? `${fixed(r.mem.rssMb, 0)} (${fixed(r.mem.peakMb, 0)})` : ""} | ${r.target === "direct" ? "" : fixed(r.cpuUs.target, 0)} | ${fixed(r.cpuUs.upstream, 0)} | ${r.wrk.non2xx + r.wrk.errors + r.lat.errors} |`,
    );
  }
  lines.push(
    "",
    "wrk's own latency under saturation (queueing included):",
    "",
    "| target | mode | p50 ms | p99 ms |",
    "|---|---|---:|---:|",
  );
  for (const r of m.rows) lines.push(`| ${r.target} | ${r.mode} | ${fixed(r.wrk.p50)} | ${fixed(r.wrk.p99)} |`);
  const cpu = m.rows
    .filter((r) => r.target === "switchyard" && r.mode !== "translated")
    .flatMap((r) => {
      const pk = m.rows.find((p) => p.target === "portkey" && p.mode === r.mode);
      const bare = m.rows.find((p) => p.target === "bare proxy" && p.mode === r.mode);
      if (!bare) return [];
      const portkey = pk
        ? `, Portkey ${fixed(pk.cpuUs.target, 0)} µs (${fixed(pk.cpuUs.target / r.cpuUs.target, 1)}× Switchyard's)`
        : "";
      return [
        `- ${r.mode}: Switchyard ${fixed(r.cpuUs.target, 0)} µs, bare proxy ${fixed(bare.cpuUs.target, 0)} µs${portkey}`,
      ];
    });
  if (cpu.length) {
    lines.push(
      "",
      "CPU per request (all threads of the target's process). Not a target: on this shared machine throughput is; where a",
      "gateway has the machine to itself and is CPU-bound, its throughput would follow this instead (an inference):",
      "",
      ...cpu,
    );
  }
  return lines;
}

export function sequentialTable(m: MainRun): string[] {
  const lines = [
    "## Sequential latency (one request at a time)",
    "",
    "Added = target − direct in the same pass; Portkey has a pass of its own (Method).",
    "",
    "| target | mode | p50 ms | p99 ms | direct p50 | direct p99 | added p50 | added p99 | added p50 vs bare | requests | errors |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const bareAdded = (mode: string) => {
    const bare = m.sequential.find((s) => s.target === "bare proxy" && s.mode === mode);
    return bare ? bare.p50 - bare.direct.p50 : NaN;
  };
  for (const s of m.sequential) {
    const added = s.p50 - s.direct.p50;
    const ratio = s.target !== "bare proxy" && bareAdded(s.mode) > 0 ? times(added / bareAdded(s.mode)) : "";
    lines.push(
      `| ${s.target} | ${s.mode} | ${fixed(s.p50)} | ${fixed(s.p99)} | ${fixed(s.direct.p50)} | ${fixed(s.direct.p99)} | ${signed(added)} | ${signed(s.p99 - s.direct.p99)} | ${ratio} | ${s.n} | ${s.errors} |`,
    );
  }
  return lines;
}

export function openStreamsLines(s: StreamsSection): string[] {
  const r = s.result;
  const lines = [
    `## ${s.streams.toLocaleString("en")} open streams`,
    "",
    `Each stream: ${s.events} content events, one every ${s.gapMs} ms (~${(((s.events + 3) * s.gapMs) / 1000).toFixed(0)} s). The gateway had answered ${s.warmupCalls} quick calls first.`,
    "",
    `- resident set: ${fixed(s.idleRssMb, 0)} MB idle before; ` +
      (r.rssAllOpenMb
        ? `${fixed(r.rssAllOpenMb.median, 0)} MB median, ${fixed(r.rssAllOpenMb.max, 0)} MB at most while all ${s.streams} were open (all open ${fixed(num(r.allOpenAfterMs) / 1000, 1)} s after the first request)`
        : `never all ${s.streams} open at once; ${fixed(r.rssAtMostOpenMb, 0)} MB with the most open (${r.mostOpen})`) +
      `; peak over the gateway's life ${fixed(r.peakMb, 0)} MB`,
    `- most streams open at once: ${r.mostOpen} at the client, ${r.upstreamMostOpen} at the upstream`,
    `- ${r.completed}/${s.streams} streams complete (to \`data: [DONE]\`) in ${fixed(r.durationMs / 1000, 1)} s${r.errors.length ? `; errors: ${r.errors.map((e) => `\`${e.replace(/\s+/g, " ").slice(0, 120)}\``).join(", ")}` : ""}`,
    `- after a graceful stop: ${s.ledger.pendingHolds} pending holds, books ${s.ledger.balanced ? "balance" : "**do not balance**"} (\`ledger:check\`), usage records ${Object.entries(
      s.ledger.usageByStatus,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  ];
  if (r.upstreamMostOpen < s.streams && r.upstreamMostOpen === 256) {
    lines.push(
      "",
      "256 is Bun's default bound on a process's `fetch` requests in flight (`BUN_CONFIG_MAX_HTTP_REQUESTS`, read when the",
      "process starts): with it, the gateway's calls past the 256th wait for one of the first to end before going upstream.",
    );
  }
  return lines;
}

export function soakLines(s: SoakRun & Stamp): string[] {
  const runMs = s.minutes * 60_000;
  const lows = floors(s.samples, s.floorWindowMs);
  const perMinute = Array.from({ length: Math.ceil(s.minutes) }, (_, k) =>
    lows.filter((l) => l.atMs >= k * 60_000 && l.atMs < (k + 1) * 60_000),
  )
    .map((ls, k) => (ls.length ? `${k + 1}: ${fixed(Math.min(...ls.map((l) => l.rssMb)), 0)}` : ""))
    .filter(Boolean);
  const sent = Object.entries(s.sent)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  return [
    `## Soak (${s.minutes} min)`,
    "",
    `- traffic: ${s.rate} calls/s (${sent}); ${s.errors} errors (a client leaving is not one)`,
    `- RSS slope over the second half: ${fixed(s.floorSlopeMbPerMin)} MB/min fitted to each ${fixed(s.floorWindowMs / 1000, 0)} s window's lowest sample, ${fixed(s.slopeMbPerMin)} MB/min to all ${s.samples.filter((x) => x.atMs >= runMs / 2).length} samples (every ${fixed(s.sampleMs / 1000, 0)} s)`,
    `- that is ${fixed((s.floorSlopeMbPerMin * 2 ** 20) / (s.rate * 60), 0)} bytes kept per call at this rate (the verdict's bound, ${TARGETS.soakSlope} MB/min, is ${fixed((TARGETS.soakSlope * 2 ** 20) / (s.rate * 60), 0)})`,
    `- RSS, MB, the lowest each minute: ${perMinute.join(", ")}; highest sample ${fixed(Math.max(...s.samples.map((x) => x.rssMb)), 0)} MB`,
    `- after a graceful stop: ${s.ledger.pendingHolds} pending holds, books ${s.ledger.balanced ? "balance" : "**do not balance**"}, usage records ${Object.entries(
      s.ledger.usageByStatus,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  ];
}
