// The bench's arithmetic: the soak's slope fit and the window floors its verdict rests on, percentiles, ratios.
import { describe, expect, test } from "bun:test";
import { floors, median, percentile, ratios, slope, soakSlope } from "../../bench/stats";

describe("slope", () => {
  test("a straight line's slope is recovered exactly", () => {
    expect(slope([0, 1, 2, 3].map((x) => ({ x, y: 5 + 2 * x })))).toBeCloseTo(2, 10);
  });
  test("fewer than two distinct x have no slope", () => {
    expect(slope([{ x: 1, y: 2 }])).toBeNaN();
    expect(
      slope([
        { x: 1, y: 2 },
        { x: 1, y: 3 },
      ]),
    ).toBeNaN();
  });
});

describe("soakSlope", () => {
  const minute = 60_000;
  test("fits the second half only, in MB per minute: warm-up growth in the first half does not count", () => {
    // 0–5 min: grows 10 MB/min (warm-up); 5–10 min: flat at 150 MB
    const samples = Array.from({ length: 121 }, (_, k) => ({
      atMs: k * 5000,
      rssMb: k * 5000 < 5 * minute ? 100 + (10 * k * 5000) / minute : 150,
    }));
    expect(soakSlope(samples, 10 * minute)).toBeCloseTo(0, 10);
  });
  test("a leak in the second half is its rate per minute", () => {
    const samples = Array.from({ length: 121 }, (_, k) => ({
      atMs: k * 5000,
      rssMb: 100 + 1.5 * ((k * 5000) / minute),
    }));
    expect(soakSlope(samples, 10 * minute)).toBeCloseTo(1.5, 10);
  });
});

describe("floors", () => {
  test("keep each window's lowest sample, so a garbage collector's sawtooth over a flat floor fits a flat line", () => {
    // a 15 s sawtooth from 120 to 150 MB over 10 minutes, sampled every 5 s
    const samples = Array.from({ length: 121 }, (_, k) => ({ atMs: k * 5000, rssMb: 120 + 10 * (k % 3) }));
    const lows = floors(samples, 30_000);
    expect(lows.length).toBe(21);
    expect(lows.every((s) => s.rssMb === 120)).toBe(true);
    expect(soakSlope(lows, 600_000)).toBeCloseTo(0, 10);
  });
  test("a rising floor under the sawtooth still shows as growth", () => {
    const samples = Array.from({ length: 121 }, (_, k) => ({
      atMs: k * 5000,
      rssMb: 120 + 10 * (k % 3) + 2 * ((k * 5000) / 60_000),
    }));
    expect(soakSlope(floors(samples, 30_000), 600_000)).toBeCloseTo(2, 1);
  });
});

test("median averages the middle pair; percentile is nearest-rank", () => {
  expect(median([3, 1, 2])).toBe(2);
  expect(median([4, 1, 2, 3])).toBe(2.5);
  expect(median([])).toBeNaN();
  const xs = Array.from({ length: 100 }, (_, k) => k + 1);
  expect(percentile(xs, 50)).toBe(50);
  expect(percentile(xs, 99)).toBe(99);
  expect(percentile([7], 99)).toBe(7);
});

test("ratios pair rounds one to one, and refuse rounds that do not pair", () => {
  expect(ratios([10, 20], [5, 40])).toEqual([2, 0.5]);
  expect(ratios([10, 20], [5])).toEqual([]);
});
