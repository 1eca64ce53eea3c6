// The verdict rules of BENCHMARKS.md (issue 25's targets) and the record the file carries between runs.
import { describe, expect, test } from "bun:test";
import { readRecord, recordComment, type BenchRecord, type MainRun, type Row } from "../../bench/record";
import { verdicts } from "../../bench/verdicts";

const row = (target: string, mode: string, rounds: number[], lat = { p50: 1, p99: 2 }, cpu = 100): Row => ({
  target,
  mode,
  wrk: { rps: rounds[0]!, p50: 1, p99: 2, requests: 1000, non2xx: 0, errors: 0 },
  rounds,
  lat: { n: 100, errors: 0, ttfb50: lat.p50, ttfb99: lat.p99, ...lat },
  mem: null,
  cpuUs: { target: cpu, upstream: 10 },
});

const stamp = { date: "2026-11-27 08:00 UTC", commit: "abc1234", machine: { cpus: 2, model: "test", bun: "1.4.5" } };

function main(over: Partial<MainRun> = {}): MainRun {
  const rows: Row[] = [];
  for (const mode of ["json", "stream", "agent"]) {
    rows.push(row("direct", mode, [300, 300, 300], { p50: 0.3, p99: 1 }));
    rows.push(row("bare proxy", mode, [100, 100, 100]));
    // per-round ratios to bare 0.8, 0.6, 0.75 → median 0.75 (met); to Portkey 3.2, 2.4, 3.0 → median 3.0 (met)
    rows.push(row("switchyard", mode, [80, 60, 75], { p50: 0.9, p99: 3 }));
    rows.push(row("portkey", mode, [25, 25, 25]));
  }
  const seq = (target: string, mode: string, p50: number) => ({
    target,
    mode,
    p50,
    p99: p50 * 2,
    n: 100,
    errors: 0,
    direct: { p50: 0.2, p99: 0.4 },
  });
  return {
    ...stamp,
    params: {
      connections: 32,
      rounds: 3,
      seconds: 5,
      warmup: 2,
      rate: 1000,
      pacedConnections: 64,
      latencySeconds: 5,
      sequentialIterations: 600,
    },
    rows,
    // added: bare +0.4 ms; switchyard json +0.5 (1.25×: met), stream +0.7 (1.75×: missed), agent none measured
    sequential: [
      seq("bare proxy", "json", 0.6),
      seq("switchyard", "json", 0.7),
      seq("bare proxy", "stream", 0.6),
      seq("switchyard", "stream", 0.9),
    ],
    streams: null,
    notes: [],
    ...over,
  };
}

const byTarget = (r: BenchRecord) => Object.fromEntries(verdicts(r).map((v) => [v.target, v]));

describe("verdicts", () => {
  test("throughput is judged on the median of the per-round ratios, against the bare proxy and Portkey", () => {
    const v = byTarget({ main: main() });
    expect(v["json: throughput ≥ 0.7× bare proxy"]).toMatchObject({
      status: "met",
      measured: "0.75× (rounds 0.80×, 0.60×, 0.75×)",
    });
    expect(v["agent: throughput ≥ 3× Portkey"]!.status).toBe("met");
  });

  test("a ratio below the bound is missed; a target without Portkey is not measured", () => {
    const m = main();
    m.rows = m.rows.filter((r) => r.target !== "portkey");
    m.rows.find((r) => r.target === "switchyard" && r.mode === "stream")!.rounds = [60, 69, 90];
    const v = byTarget({ main: m });
    expect(v["stream: throughput ≥ 0.7× bare proxy"]!.status).toBe("missed");
    expect(v["json: throughput ≥ 3× Portkey"]!.status).toBe("not measured");
  });

  test("sequential added latency: at most 1.5× the bare proxy's median, compared without dividing", () => {
    const v = byTarget({ main: main() });
    expect(v["json: sequential added latency ≤ 1.5× bare proxy's (median)"]!.status).toBe("met");
    expect(v["stream: sequential added latency ≤ 1.5× bare proxy's (median)"]!.status).toBe("missed");
    expect(v["agent: sequential added latency ≤ 1.5× bare proxy's (median)"]!.status).toBe("not measured");
  });

  const streams = (open: number, upstream: number, rss: number | null, n = 1000) => ({
    streams: n,
    events: 20,
    gapMs: 500,
    idleRssMb: 100,
    warmupCalls: 300,
    result: {
      streams: n,
      completed: n,
      failed: 0,
      mostOpen: open,
      upstreamMostOpen: upstream,
      allOpenAfterMs: rss === null ? null : 500,
      rssAllOpenMb: rss === null ? null : { median: rss - 5, max: rss },
      rssAtMostOpenMb: 120,
      peakMb: 170,
      durationMs: 12_000,
      errors: [],
    },
    ledger: { pendingHolds: 0, balanced: true, usageByStatus: { ok: n + 300 } },
  });
  const rssTarget = "RSS ≤ 150 MB with 1,000 open streams";

  test("open streams: the largest sample while all were open, and only if all were open at the upstream too", () => {
    expect(byTarget({ main: main({ streams: streams(1000, 1000, 149) }) })[rssTarget]!.status).toBe("met");
    expect(byTarget({ main: main({ streams: streams(1000, 1000, 151) }) })[rssTarget]!.status).toBe("missed");
    // Bun's fetch lets 256 through: the calls past them wait, so 1,000 were never open at once
    const capped = byTarget({ main: main({ streams: streams(256, 256, null) }) })[rssTarget]!;
    expect(capped.status).toBe("missed");
    expect(capped.measured).toContain("256 upstream");
    expect(byTarget({ main: main({ streams: streams(200, 200, 110, 200) }) })[rssTarget]!.status).toBe("not measured");
  });

  test("open streams: a pending hold left after the gateway stopped is a miss", () => {
    const s = streams(1000, 1000, 140);
    s.ledger.pendingHolds = 1;
    expect(
      byTarget({ main: main({ streams: s }) })["every open stream completes; no pending hold after, the books balance"]!
        .status,
    ).toBe("missed");
  });

  const soak = (minutes: number, floorSlope: number) => ({
    ...stamp,
    minutes,
    rate: 200,
    sampleMs: 5000,
    samples: [],
    slopeMbPerMin: 3,
    floorSlopeMbPerMin: floorSlope,
    floorWindowMs: 30_000,
    sent: { json: 10 },
    errors: 0,
    ledger: { pendingHolds: 0, balanced: true, usageByStatus: { ok: 10 } },
  });
  const soakTarget = "no RSS growth over a 10-minute soak (floor slope ≤ 2 MB/min)";

  test("soak: judged on the floor's slope, only for a soak of the target's length; shown without the full bench", () => {
    expect(byTarget({ soak: soak(10, 0.4) })[soakTarget]!.status).toBe("met");
    expect(byTarget({ soak: soak(10, 2.2) })[soakTarget]!.status).toBe("missed");
    expect(byTarget({ soak: soak(1, 0.1) })[soakTarget]!.status).toBe("not measured");
    expect(byTarget({ main: main() })[soakTarget]!.status).toBe("not measured");
  });
});

test("the record round-trips through BENCHMARKS.md's comment, NaN as null", () => {
  const r: BenchRecord = { main: main() };
  r.main!.rows[0]!.cpuUs.target = NaN;
  const back = readRecord(`# Benchmarks\n\ntext\n\n${recordComment(r)}\n`);
  expect(back.main!.rows.length).toBe(12);
  expect(back.main!.rows[0]!.cpuUs.target).toBeNull();
  expect(readRecord("# Benchmarks from before the record\n")).toEqual({});
  expect(readRecord(null)).toEqual({});
});

test("a record of another shape is not read: its parts are to be measured again", () => {
  const comment = recordComment({ main: main() }).replace('"version":1', '"version":0');
  expect(readRecord(comment)).toEqual({});
});
