// Time-of-day prices (pricing.peak, catalog/peak.ts): which moments are peak, the prices a call is billed at, and the
// startup error naming the entry and field of a schedule that is wrong.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { loadCatalog } from "../../src/catalog-loader";
import { holidayListsEnding, isPeakAt, modelAt, peakSchedule } from "../../src/catalog/peak";
import { createLogger } from "../../src/log";
import { startGateway } from "../support/gateway";
import { pricesFor } from "../../src/llm/usage";

const DEEPSEEK = {
  utc_offset: "+08:00",
  days: ["mon", "tue", "wed", "thu", "fri"],
  windows: [
    ["09:00", "12:00"],
    ["14:00", "18:00"],
  ],
};
/** Beijing time, as DeepSeek's schedule is written: "2026-11-25 09:00" → epoch ms. */
const beijing = (local: string) => Date.parse(local.replace(" ", "T") + ":00+08:00");

describe("which moments are peak", () => {
  const s = peakSchedule(DEEPSEEK);
  test.each([
    ["2026-11-25 08:59:59", false],
    ["2026-11-25 09:00", true],
    ["2026-11-25 11:59:59.999", true],
    ["2026-11-25 12:00", false],
    ["2026-11-25 13:59", false],
    ["2026-11-25 14:00", true],
    ["2026-11-25 17:59", true],
    ["2026-11-25 18:00", false],
    ["2026-11-28 10:00", false], // Saturday
    ["2026-11-29 15:00", false], // Sunday
    ["2026-11-30 09:30", true], // Monday
  ])("%s Beijing time: peak %p", (local, peak) => {
    const ms = Date.parse(local.replace(" ", "T") + "+08:00");
    expect(isPeakAt(s, ms)).toBe(peak);
  });

  test("the weekday is the schedule's own: Monday 09:30 Beijing time is still Sunday in UTC, and peak", () => {
    expect(new Date(beijing("2026-11-30 09:30")).getUTCDay()).toBe(1);
    expect(new Date(beijing("2026-11-30 07:30")).getUTCDay()).toBe(0);
    expect(isPeakAt(peakSchedule({ ...DEEPSEEK, windows: [["07:00", "08:00"]] }), beijing("2026-11-30 07:30"))).toBe(
      true,
    );
  });

  test("a listed holiday is off-peak all day, in the schedule's own date", () => {
    const h = peakSchedule({ ...DEEPSEEK, holidays: ["2027-01-01"], holidays_through: "2027-12-31" });
    expect(isPeakAt(h, beijing("2027-01-01 10:00"))).toBe(false); // a Friday
    expect(isPeakAt(h, beijing("2027-01-04 10:00"))).toBe(true);
    expect(isPeakAt(s, beijing("2027-01-01 10:00"))).toBe(true); // not listed: an ordinary Friday
  });
});

describe("the prices a call is billed at", () => {
  const flash = loadCatalog().llm.get("deepseek-flash")!;

  test("before it goes upstream, the peak prices (what the hold is sized at)", () => {
    expect(pricesFor(flash.prices, 1000)).toMatchObject({ input: 300, output: 1200, cacheRead: 6 });
  });

  test("sent in peak hours, the peak prices; at any other time the off-peak ones; with no schedule left", () => {
    const peak = modelAt(flash, beijing("2026-11-25 10:00"));
    const offPeak = modelAt(flash, beijing("2026-11-25 12:00"));
    expect(peak.prices).toEqual({ input: 300, output: 1200, cacheRead: 6, cacheWrite: 300, cacheWrite1h: 300 });
    expect(offPeak.prices).toEqual({ input: 150, output: 600, cacheRead: 3, cacheWrite: 150, cacheWrite1h: 150 });
    expect(pricesFor(offPeak.prices, 1000).output).toBe(600);
  });

  test("a model without time-of-day prices is the same at every hour", () => {
    const luna = loadCatalog().llm.get("gpt-6-luna")!;
    expect(modelAt(luna, beijing("2026-11-25 10:00"))).toBe(luna);
  });

  test("deepseek-v4-pro: $0.66 / $1.98 / $0.022 off-peak, twice that in peak hours", () => {
    const pro = loadCatalog().llm.get("deepseek-v4-pro")!;
    expect(modelAt(pro, beijing("2026-11-25 19:00")).prices).toMatchObject({ input: 660, output: 1980, cacheRead: 22 });
    expect(modelAt(pro, beijing("2026-11-25 15:00")).prices).toMatchObject({
      input: 1320,
      output: 3960,
      cacheRead: 44,
    });
  });
});

describe("a bad schedule stops startup naming the entry and the field", () => {
  const entry = (peak: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id: "tod-model",
    type: "llm",
    name: "Time of day",
    description: "test",
    endpoint: "/v1/responses",
    provider: "deepseek",
    upstream_model: "tod",
    capabilities: [],
    pricing: {
      input: 1,
      output: 2,
      cache_read: 0.1,
      peak: { ...DEEPSEEK, input: 2, output: 4, cache_read: 0.2, ...peak },
      ...extra,
    },
  });
  test.each([
    [
      "overlapping windows",
      {
        windows: [
          ["09:00", "12:00"],
          ["11:00", "13:00"],
        ],
      },
      /field pricing\.peak\.windows\[1\]: overlaps window 0/,
    ],
    [
      "a window past midnight",
      { windows: [["22:00", "02:00"]] },
      /field pricing\.peak\.windows\[0\]: ends before it starts/,
    ],
    [
      "a time that is not one",
      { windows: [["9:00", "12:00"]] },
      /field pricing\.peak\.windows\[0\]: "9:00" is not a time of day/,
    ],
    ["an hour past 24:00", { windows: [["09:00", "24:30"]] }, /field pricing\.peak\.windows\[0\]/],
    ["no windows", { windows: [] }, /field pricing\.peak\.windows: must be a list/],
    ["an unknown day", { days: ["mon", "fry"] }, /field pricing\.peak\.days\[1\]: "fry" is not one of/],
    ["a day twice", { days: ["mon", "mon"] }, /field pricing\.peak\.days\[1\]: "mon" is listed twice/],
    ["a bad offset", { utc_offset: "UTC+8" }, /field pricing\.peak\.utc_offset: must be "\+HH:MM"/],
    [
      "a holiday that is no date",
      { holidays: ["2027-02-30"], holidays_through: "2027-12-31" },
      /field pricing\.peak\.holidays\[0\]/,
    ],
    ["holidays without their end", { holidays: ["2027-01-01"] }, /field pricing\.peak\.holidays_through: is required/],
    [
      "a holiday after the list's end",
      { holidays: ["2028-01-01"], holidays_through: "2027-12-31" },
      /field pricing\.peak\.holidays\[0\]: 2028-01-01 is after/,
    ],
    ["a peak price below the off-peak one", { output: 1 }, /field pricing\.peak\.output: is below the off-peak price/],
    ["a negative peak price", { input: -2 }, /field pricing\.peak\.input: must be a non-negative number/],
    [
      "a kind the off-peak prices name left out",
      { cache_read: undefined },
      /field pricing\.peak\.cache_read: is required/,
    ],
    ["an unknown field", { windows_utc: [] }, /field pricing\.peak\.windows_utc: unknown field/],
  ])("%s", (_, peak, error) => {
    const path = join(tmpdir(), `catalog-peak-${Date.now()}-${Math.random()}.json`);
    writeFileSync(path, JSON.stringify([entry(peak)]));
    expect(() => loadCatalog(path)).toThrow(new RegExp(`entry "tod-model", ${error.source}`));
  });

  test("peak prices beside long-context ones are refused rather than guessed", () => {
    const path = join(tmpdir(), `catalog-peak-long-${Date.now()}.json`);
    writeFileSync(path, JSON.stringify([entry({}, { long_context: { above_input_tokens: 1000, input: 3 } })]));
    expect(() => loadCatalog(path)).toThrow(/entry "tod-model", field pricing\.peak: cannot be combined/);
  });
});

describe("a holiday list that ends within 30 days or has ended", () => {
  test("is named from 30 days before its last day, with the days it still covers", () => {
    const flash = loadCatalog().llm.get("deepseek-flash")!;
    expect(holidayListsEnding([flash], "2026-12-01")).toEqual([]); // covers 30 more days
    expect(holidayListsEnding([flash], "2026-12-02")).toEqual([
      { model: "deepseek-flash", holidays_through: "2026-12-31", days_left: 29 },
    ]);
    expect(holidayListsEnding([flash], "2027-01-01")).toEqual([
      { model: "deepseek-flash", holidays_through: "2026-12-31", days_left: -1 },
    ]);
  });

  test("is named at startup: ending soon, the operator is told to list next year's; ended, that it bills peak", async () => {
    const path = join(tmpdir(), `catalog-peak-ended-${Date.now()}.json`);
    const old = { ...DEEPSEEK, holidays: ["2020-01-01"], holidays_through: "2020-12-31", input: 2, output: 4 };
    const entry = { id: "old-schedule", type: "llm", name: "Old", description: "test", endpoint: "/v1/responses" };
    const upstream = { provider: "deepseek", upstream_model: "old", capabilities: [] };
    writeFileSync(path, JSON.stringify([{ ...entry, ...upstream, pricing: { input: 1, output: 2, peak: old } }]));
    const lines: any[] = [];
    const gw = await startGateway(
      { CATALOG_PATH: path, CATALOG_DAY: "2026-12-10" },
      createLogger("info", (l) => void lines.push(JSON.parse(l))),
    );
    await gw.stop();
    expect(lines.filter((l) => l.model === "old-schedule")).toMatchObject([
      { level: "warn", holidays_through: "2020-12-31", msg: expect.stringContaining("holiday list has ended") },
    ]);
    // the built-in DeepSeek entries' list runs through 2026-12-31: 21 days left on 2026-12-10
    expect(lines.filter((l) => l.model === "deepseek-flash")).toMatchObject([
      {
        level: "warn",
        holidays_through: "2026-12-31",
        days_left: 21,
        msg: expect.stringContaining("list the next year's holidays"),
      },
    ]);
  });
});
