// BENCHMARKS.md from a run's record: the verdicts first, then the method and every section's numbers.

import type { BenchRecord, MainRun } from "./record";
import { recordComment } from "./record";
import { loadTables, openStreamsLines, sequentialTable, soakLines } from "./report-sections";
import { verdicts } from "./verdicts";

export type { Row } from "./record";

function method(m: MainRun): string[] {
  const p = m.params;
  return [
    "## Method",
    "",
    "- Upstream: the fake LLM upstream (`test/fakes/llm-upstream.ts --fast`), answering chat completions at once from the",
    "  recorded fixtures (non-streaming: one JSON body; streaming: one write per SSE event).",
    "- Requests: chat completions to gpt-5.2 in three modes: **json** (a short request, answered whole), **stream** (the",
    "  same, streamed) and **agent** (what a coding agent sends on each turn of a long session, streamed: a ~180 KB body",
    "  with a long system prompt, 20 tools with JSON schemas and 80 turns of code, tool output and non-ASCII text;",
    "  bench/agent-body.ts). On the gateway alone, **translated**: the stream's request sent as Anthropic Messages",
    "  (`/v1/messages`, streamed) to the same chat-completions model, so the gateway translates the request and every",
    "  event of the answer; its added latency is measured against direct's stream (the same upstream call).",
    "- Targets: **direct** (the fake itself), **bare proxy** (bench/bare-proxy.ts: a Bun proxy with no logic at all —",
    "  request → fetch → the upstream's body — the floor the runtime sets), **switchyard** (this gateway: SQLite,",
    "  in-process rate limits, a key whose limit never bites, full metering — hold, stream tap, post, usage record),",
    "  **portkey** (`@portkey-ai/gateway` on Bun with `x-portkey-provider: openai` and `x-portkey-custom-host`). All",
    "  four are started first and stay up; one is under load at a time.",
    `- Throughput: \`wrk -t1 -c${p.connections}\` (issue 25's targets are defined on 1 thread × 32 connections), saturating, in`,
    `  ${p.rounds} interleaved round${p.rounds === 1 ? "" : "s"} of ${p.seconds} s after a ${p.warmup} s warm-up per target and mode: each round runs every target`,
    "  once per mode, so a slow spell of the shared machine hits all of them alike. rps is the median of a target's",
    '  rounds; "vs bare" and "vs portkey" are the medians of the per-round ratios (each pair measured seconds apart).',
    `- Latency under load: ${p.pacedConnections} connections sending at a fixed total rate of ${p.rate} requests/s (agent: ${p.rate / 5}/s) for`,
    `  ${p.latencySeconds} s (bench/paced.ts, its own process), so latency is what a request costs rather than how long it queued.`,
    "  TTFB is the time to the first body byte. Added = target − direct at the same percentile.",
    `- Sequential latency: one request at a time, back to back (bench/sequential.ts, its own process), each timed to its`,
    `  last byte, the targets taking turns with direct in a rotating order: ${p.sequentialIterations} rounds per mode (agent: a third as`,
    "  many) after 50 not counted. The bare proxy and Switchyard share a pass; Portkey has its own, since its ~25 ms",
    "  streams leave the machine idle long enough to slow whichever request comes next. Added = target − direct of the",
    "  same pass at the same percentile: what a gateway adds to a call when nothing is queued.",
    "- Open streams: a fresh gateway in front of a slow upstream (bench/dribble-upstream.ts: one event per gap), warmed",
    "  with a few hundred quick calls, then that many streamed calls opened at once by a client of its own",
    "  (bench/open-streams.ts); the gateway's resident set is sampled every 250 ms while all are open. Then it stops",
    "  gracefully (its floats go back) and the books are read: pending holds, `ledger:check`, usage records.",
    "- Soak (`bun run bench --soak`, separate): a fresh gateway, mixed traffic at a fixed rate (json, stream, agent,",
    "  translated, and one call in twenty a client that leaves a slow stream after its first event), RSS sampled every",
    "  few seconds. RSS saws by tens of MB between garbage collections, so the verdict fits a line (least squares) to the",
    "  lowest sample of each window over the second half (the first is warm-up); the slope of all samples is shown too.",
    "- Memory in the load table: the gateway's resident set after its runs (peak in brackets). CPU: time used per",
    '  request during the throughput rounds (median), all threads, from /proc: the target\'s own ("CPU µs") and the fake',
    "  upstream's while it served that target (\"upstream µs\"). wrk's share is not counted.",
  ];
}

export function renderReport(record: BenchRecord): string {
  const m = record.main;
  const lines = ["# Benchmarks", ""];
  if (m) {
    lines.push(
      `Written by \`bun run bench\` on ${m.date} at commit ${m.commit}. Machine: ${m.machine.cpus} CPUs (${m.machine.model}),`,
      `Bun ${m.machine.bun}; the load generators, the upstream and the gateway under test all share those CPUs. Numbers`,
      "move ±20% between runs on shared machines: compare the rows of one run with each other, not with another run.",
    );
  } else lines.push("No full bench recorded in this file yet (`bun run bench`).");
  if (record.soak)
    lines.push("", `The soak: ${record.soak.date} at commit ${record.soak.commit} (\`bun run bench --soak\`).`);
  lines.push("", "## Verdict", "", "| target | measured | verdict |", "|---|---|---|");
  for (const v of verdicts(record))
    lines.push(`| ${v.target} | ${v.measured} | ${v.status === "missed" ? "**missed**" : v.status} |`);
  if (m) {
    lines.push("", ...method(m), "", ...loadTables(m), "", ...sequentialTable(m));
    if (m.streams) lines.push("", ...openStreamsLines(m.streams));
  }
  if (record.soak) lines.push("", ...soakLines(record.soak));
  if (m?.notes.length) lines.push("", ...m.notes.map((n) => `- ${n}`));
  lines.push("", recordComment(record));
  return lines.join("\n") + "\n";
}
