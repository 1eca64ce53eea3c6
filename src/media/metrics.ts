// What the media engine reports to Prometheus. Counters live in the main thread's registry (src/ops/metrics.ts);
// an engine inside a Bun Worker cannot reach it, so there the sink posts each event to the main thread, which
// applies it (workers.ts). In-process engines call the registry directly.
import { metrics } from "../ops/metrics";

export interface MediaMetrics {
  callback(outcome: "delivered" | "retry" | "failed"): void;
  creditsPosted(micros: number): void;
  upstreamError(provider: string, kind: string): void;
}

export type MetricEvent = {
  [K in keyof MediaMetrics]: { type: "metric"; name: K; args: Parameters<MediaMetrics[K]> };
}[keyof MediaMetrics];

export const directMetrics: MediaMetrics = {
  callback: (outcome) => metrics.callback(outcome),
  creditsPosted: (micros) => metrics.creditsPosted(micros, "task"),
  upstreamError: (provider, kind) => metrics.upstreamError(provider, kind),
};

export function postingMetrics(post: (e: MetricEvent) => void): MediaMetrics {
  return {
    callback: (...args) => post({ type: "metric", name: "callback", args }),
    creditsPosted: (...args) => post({ type: "metric", name: "creditsPosted", args }),
    upstreamError: (...args) => post({ type: "metric", name: "upstreamError", args }),
  };
}

export function applyMetric(e: MetricEvent): void {
  (directMetrics[e.name] as (...a: unknown[]) => void)(...e.args);
}
