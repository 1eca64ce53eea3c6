// The open-streams section: a fresh gateway in front of the slow upstream (bench/dribble-upstream.ts), warmed with a
// few hundred quick calls, then `streams` streamed calls held open at once (bench/open-streams.ts samples its memory
// meanwhile). Once they are done the gateway stops gracefully and the books are read: every stream charged once,
// no pending hold left, `ledger:check` clean.

import type { OpenStreamsResult } from "./open-streams";
import { memoryOf, runProbe, startDribble, startSwitchyard, type LedgerState } from "./targets";

export interface StreamsParams {
  streams: number;
  /** each stream: this many content events, one per gap */
  events: number;
  gapMs: number;
}

export interface StreamsSection extends StreamsParams {
  idleRssMb: number;
  warmupCalls: number;
  result: OpenStreamsResult;
  ledger: LedgerState;
}

const WARMUP_CALLS = 300;

export async function measureOpenStreams(p: StreamsParams): Promise<StreamsSection> {
  const upstream = await startDribble(19400);
  try {
    const sy = await startSwitchyard(19250, upstream.url);
    let stopped = false;
    try {
      const headers = { "content-type": "application/json", authorization: `Bearer ${sy.key}` };
      const call = (content: string, stream: boolean) =>
        JSON.stringify({ model: "gpt-5.2", max_completion_tokens: 256, stream, messages: [{ role: "user", content }] });
      for (let k = 0; k < WARMUP_CALLS; k += 10) {
        await Promise.all(
          Array.from({ length: 10 }, (_, j) =>
            fetch(`${sy.url}/v1/chat/completions`, {
              method: "POST",
              headers,
              body: call("Say hello.", (k + j) % 2 === 0),
            }).then((r) => r.arrayBuffer()),
          ),
        );
      }
      await Bun.sleep(1000);
      const idleRssMb = memoryOf(sy.proc.pid).rssMb;
      await fetch(`${upstream.url}/stats/reset`);
      const streamMs = (p.events + 3) * p.gapMs;
      const result = await runProbe<OpenStreamsResult>(
        "open-streams.ts",
        {
          url: `${sy.url}/v1/chat/completions`,
          headers,
          body: call(`dribble ${p.events}x${p.gapMs}`, true),
          streams: p.streams,
          gatewayPid: sy.proc.pid,
          statsUrl: `${upstream.url}/stats`,
          sampleMs: 250,
          // generous: with fewer upstream requests in flight than streams, the streams go in waves
          timeoutMs: 30_000 + streamMs * Math.ceil(p.streams / 200),
        },
        { BUN_CONFIG_MAX_HTTP_REQUESTS: String(Math.min(65_535, p.streams * 2 + 64)) },
      );
      stopped = true;
      const ledger = await sy.stopAndCheck();
      console.log(
        `open streams: ${result.completed}/${p.streams} complete, most open at once ${result.mostOpen} (upstream ${result.upstreamMostOpen}), ` +
          `RSS idle ${idleRssMb.toFixed(0)} MB, all open ${result.rssAllOpenMb ? result.rssAllOpenMb.max.toFixed(0) + " MB" : "never"}, peak ${result.peakMb.toFixed(0)} MB; ` +
          `pending holds after ${ledger.pendingHolds}, books ${ledger.balanced ? "balance" : "DO NOT balance"}`,
      );
      return { ...p, idleRssMb, warmupCalls: WARMUP_CALLS, result, ledger };
    } finally {
      if (!stopped) await sy.stop();
    }
  } finally {
    await upstream.stop();
  }
}
