import { describe, expect, test } from "bun:test";
import { stackedBarChart } from "../../src/dashboard/chart";

// The Usage page's charts: the value axis reads in round numbers above the tallest bar, and the legend names only
// the models that have a bar (a model whose every call cost nothing draws nothing).

const days = [20_000, 20_001, 20_002]; // day numbers (days since 1970-01-01 UTC)
const render = (points: { day: number; model: string; value: number }[]) =>
  String(stackedBarChart(points, days, { title: "Spend", format: (v) => String(v) }));
const axisLabels = (svg: string) =>
  [...svg.matchAll(/<text class="axis"[^>]*>([^<]*)<\/text>/g)].map((m) => Number(m[1]));

describe("usage charts", () => {
  test("the value axis is 0, half and a round top at or above the tallest bar", () => {
    const svg = render([
      { day: days[0]!, model: "claude-haiku-4-5", value: 2_500_800 },
      { day: days[0]!, model: "grok-4", value: 1_500_000 },
      { day: days[1]!, model: "grok-4", value: 700_000 },
    ]);
    expect(axisLabels(svg)).toEqual([0, 2_500_000, 5_000_000]);
    expect(axisLabels(render([{ day: days[0]!, model: "m", value: 321 }]))).toEqual([0, 250, 500]);
    expect(axisLabels(render([{ day: days[0]!, model: "m", value: 1000 }]))).toEqual([0, 500, 1000]);
  });

  test("the legend names only models with a bar", () => {
    const svg = render([
      { day: days[0]!, model: "claude-haiku-4-5", value: 1200 },
      { day: days[0]!, model: "gpt-5.2", value: 0 },
    ]);
    expect(svg).toContain("claude-haiku-4-5</span>");
    expect(svg).not.toContain("gpt-5.2");
  });
});
