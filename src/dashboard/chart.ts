import { html, type Raw } from "../pages/layout";
import { dayLabel } from "./format";

// A stacked bar chart as inline SVG (no script, no library): one bar per day, one colour per model, a legend, and
// a <title> on every segment so hovering shows the exact number.

const COLORS = ["#2454d6", "#0a7a36", "#b26a00", "#7a5cc4", "#b00020", "#008b8b", "#8b5a2b", "#5b6570"];
const W = 900;
const H = 220;
// The value axis is on the right: on a phone the chart scrolls in its card and opens at its right end (the latest
// days), so the axis shows beside them.
const PAD = { left: 12, right: 72, top: 12, bottom: 36 };

export interface Point {
  day: number;
  model: string;
  value: number;
}

export function stackedBarChart(
  points: Point[],
  days: number[],
  opts: { title: string; format: (v: number) => string },
): Raw {
  if (!points.some((p) => p.value > 0))
    return html`<figure class="card" style="margin:1rem 0"><figcaption><strong>${opts.title}</strong></figcaption><p class="muted">No data in this range.</p></figure>`;
  // a model whose calls all cost nothing draws no bar, so it gets no legend entry either
  const models = [...new Set(points.filter((p) => p.value > 0).map((p) => p.model))].sort();
  const byDay = new Map<number, Map<string, number>>();
  for (const p of points) {
    if (!byDay.has(p.day)) byDay.set(p.day, new Map());
    const m = byDay.get(p.day)!;
    m.set(p.model, (m.get(p.model) ?? 0) + p.value);
  }
  const totals = days.map((d) => [...(byDay.get(d)?.values() ?? [])].reduce((a, b) => a + b, 0));
  const max = roundUp(Math.max(1, ...totals));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const labelEvery = Math.ceil(days.length / 10);

  const bars: Raw[] = [];
  days.forEach((day, i) => {
    let acc = 0;
    const x = PAD.left + i * slot + (slot - barW) / 2;
    models.forEach((model, mi) => {
      const v = byDay.get(day)?.get(model) ?? 0;
      if (!v) return;
      const top = y(acc + v);
      const height = y(acc) - top;
      acc += v;
      bars.push(
        html`<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${Math.max(0.5, height).toFixed(1)}" fill="${COLORS[mi % COLORS.length]}"><title>${dayLabel(day)} · ${model}: ${opts.format(v)}</title></rect>`,
      );
    });
    if (i % labelEvery === 0)
      bars.push(
        html`<text x="${(x + barW / 2).toFixed(1)}" y="${H - PAD.bottom + 14}" text-anchor="middle" font-size="12" fill="#5b6570">${dayLabel(day).slice(5)}</text>`,
      );
  });
  const ticks = [0, 0.5, 1].map(
    (
      f,
    ) => html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(max * f).toFixed(1)}" y2="${y(max * f).toFixed(1)}" stroke="#dde2e7"/>
<text class="axis" x="${W - PAD.right + 6}" y="${(y(max * f) + 4).toFixed(1)}" text-anchor="start" font-size="12" fill="#5b6570">${opts.format(max * f)}</text>`,
  );
  const legend = models.map(
    (m, mi) =>
      html`<span style="margin-right:1rem"><span style="display:inline-block;width:10px;height:10px;background:${COLORS[mi % COLORS.length]}"></span> ${m}</span>`,
  );

  return html`<figure class="card chart" style="margin:1rem 0"><figcaption><strong>${opts.title}</strong></figcaption>
<div class="chart-scroll"><svg role="img" aria-label="${opts.title}" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMidYMid meet">${ticks}${bars}</svg></div>
<div class="muted" style="font-size:13px">${legend}</div></figure>`;
}

/** The axis top: the smallest 1, 2 or 5 × 10^k at or above `v`, so the axis reads 0, half and top in round numbers. */
function roundUp(v: number): number {
  const power = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= v)!;
}
