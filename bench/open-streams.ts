// The client of the open-streams section, run as its own process (bun bench/open-streams.ts <spec file>) with
// BUN_CONFIG_MAX_HTTP_REQUESTS raised: Bun's fetch otherwise keeps at most 256 requests in flight, and the client must
// not be what limits the streams. Opens `streams` streamed calls at once against a slow upstream, samples the
// gateway's resident memory from /proc while they are open, reads every stream to its end and checks it is whole.
// Prints one JSON line (OpenStreamsResult).

import { median } from "./stats";
import { memoryOf } from "./targets";

interface Spec {
  url: string;
  headers: Record<string, string>;
  body: string;
  streams: number;
  gatewayPid: number;
  /** the slow upstream's /stats */
  statsUrl: string;
  sampleMs: number;
  /** give up on streams not finished by then */
  timeoutMs: number;
}

export interface OpenStreamsResult {
  streams: number;
  completed: number;
  failed: number;
  /** the most streams that had their first byte and were not yet finished, at one sample */
  mostOpen: number;
  /** the most streams the upstream had open at once */
  upstreamMostOpen: number;
  /** ms from the first request to every stream having its first byte, while none had finished; null if never */
  allOpenAfterMs: number | null;
  /** the gateway's RSS while every stream was open (median and largest sample), and its peak over the section */
  rssAllOpenMb: { median: number; max: number } | null;
  rssAtMostOpenMb: number;
  peakMb: number;
  durationMs: number;
  errors: string[];
}

export async function openStreams(spec: Spec): Promise<OpenStreamsResult> {
  const t0 = performance.now();
  let opened = 0;
  let finished = 0;
  let completed = 0;
  const errors: string[] = [];
  let mostOpen = 0;
  let rssAtMostOpen = NaN;
  let allOpenAfterMs: number | null = null;
  const rssAllOpen: number[] = [];
  let upstreamMostOpen = 0;

  async function one(): Promise<void> {
    try {
      const res = await fetch(spec.url, {
        method: "POST",
        headers: spec.headers,
        body: spec.body,
        signal: AbortSignal.timeout(spec.timeoutMs),
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      let first = true;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (first) opened++;
        first = false;
        text += decoder.decode(value, { stream: true });
      }
      if (!first) finished++;
      if (res.status === 200 && text.trimEnd().endsWith("data: [DONE]")) completed++;
      else if (errors.length < 5) errors.push(`${res.status}: ${text.slice(-200)}`);
    } catch (e) {
      if (errors.length < 5) errors.push(String(e));
    }
  }

  const sampler = setInterval(async () => {
    const openNow = opened - finished;
    const { rssMb } = memoryOf(spec.gatewayPid);
    if (openNow > mostOpen) [mostOpen, rssAtMostOpen] = [openNow, rssMb];
    if (openNow === spec.streams) {
      allOpenAfterMs ??= performance.now() - t0;
      rssAllOpen.push(rssMb);
    }
    try {
      upstreamMostOpen = Math.max(
        upstreamMostOpen,
        ((await (await fetch(spec.statsUrl)).json()) as { maxOpen: number }).maxOpen,
      );
    } catch {}
  }, spec.sampleMs);

  // Opened in quick batches rather than one burst of SYNs, which a listen backlog may drop and the kernel retry a
  // second later; the whole set is open within a fraction of the streams' lifetime either way.
  const calls: Promise<void>[] = [];
  for (let k = 0; k < spec.streams; k += 50) {
    for (let j = k; j < Math.min(spec.streams, k + 50); j++) calls.push(one());
    await Bun.sleep(10);
  }
  await Promise.all(calls);
  clearInterval(sampler);
  return {
    streams: spec.streams,
    completed,
    failed: spec.streams - completed,
    mostOpen,
    upstreamMostOpen,
    allOpenAfterMs,
    rssAllOpenMb: rssAllOpen.length ? { median: median(rssAllOpen), max: Math.max(...rssAllOpen) } : null,
    rssAtMostOpenMb: rssAtMostOpen,
    peakMb: memoryOf(spec.gatewayPid).peakMb,
    durationMs: performance.now() - t0,
    errors,
  };
}

if (import.meta.main) {
  console.log(JSON.stringify(await openStreams(JSON.parse(await Bun.file(process.argv[2]!).text()))));
}
