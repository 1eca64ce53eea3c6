// What a run measured, as data. BENCHMARKS.md carries it in a comment at its end, so the full bench and the soak can
// be run separately, in either order: each replaces its own part and the whole file is rendered again from both.

import type { OpenStreamsResult } from "./open-streams";
import type { SequentialRow, LoadParams } from "./throughput";
import type { SoakRun } from "./soak";
import type { StreamsSection } from "./streams";
import type { WrkResult } from "./wrk";

export interface Row {
  target: string;
  mode: string;
  /** the median round */
  wrk: WrkResult;
  /** requests/s of each round, in order */
  rounds: number[];
  lat: { n: number; errors: number; p50: number; p99: number; ttfb50: number; ttfb99: number };
  mem: { rssMb: number; peakMb: number } | null;
  /** CPU µs per request, all threads, median of the rounds: the target's process (NaN for direct) and the fake's */
  cpuUs: { target: number; upstream: number };
}

export interface Machine {
  cpus: number;
  model: string;
  bun: string;
}

/** When and on what a part was measured. */
export interface Stamp {
  date: string;
  commit: string;
  machine: Machine;
}

export interface MainRun extends Stamp {
  params: LoadParams & { sequentialIterations: number };
  rows: Row[];
  sequential: SequentialRow[];
  streams: StreamsSection | null;
  notes: string[];
}

export interface BenchRecord {
  /** the shape of this record: a record of another shape is not read (its runs are to be done again) */
  version?: number;
  main?: MainRun;
  soak?: SoakRun & Stamp;
}

export type { OpenStreamsResult, SoakRun, StreamsSection };

const MARK = "<!-- bench-data ";
const VERSION = 1;

/** The record a BENCHMARKS.md carries, or an empty one (a file from before the record, or none). */
export function readRecord(markdown: string | null): BenchRecord {
  const at = markdown?.lastIndexOf(MARK) ?? -1;
  if (at < 0) return {};
  try {
    const r = JSON.parse(markdown!.slice(at + MARK.length, markdown!.indexOf(" -->", at))) as BenchRecord;
    return r.version === VERSION ? r : {};
  } catch {
    return {};
  }
}

/** NaN does not survive JSON: it is written as null and read back as NaN where a number is expected. */
export function recordComment(r: BenchRecord): string {
  return `${MARK}${JSON.stringify({ ...r, version: VERSION }, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v))} -->`;
}

export function stamp(machine: Machine): Stamp {
  const cwd = new URL("..", import.meta.url).pathname;
  const head = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd }).stdout.toString().trim() || "unknown";
  // BENCHMARKS.md itself is what a run rewrites: its changes are not changes to what was measured
  const dirty =
    Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!BENCHMARKS.md"], { cwd })
      .stdout.toString()
      .trim() !== "";
  return {
    date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
    commit: head + (dirty ? " (with uncommitted changes)" : ""),
    machine,
  };
}
