import { html, type Raw } from "../pages/layout";
import { dayLabel } from "./format";

// A stacked bar chart as inline SVG (no script, no library): one bar per day, one colour per model, a legend, and
// a <title> on every segment so hovering shows the exact number.

const COLORS = ["#2454d6", "#0a7a36", "#b26a00", "#7a5cc4", "#b00020", "#008b8b", "#8b5a2b", "#5b6570"];
const W = 900;
const H = 220;
const PAD = { left: 64, right: 12, top: 12, bottom: 36 };

export interface Point { day: number; model: string; value: number }

/**
 * A round axis: the top at a multiple of a round step (1, 2 or 5 × a power of ten, in `unit`s: credits for µcr
 * values) at or above `max`, and the ticks at every step: at most 5 steps.
 */
export function roundAxis(max: number, unit = 1): { top: number; ticks: number[] } {
  const inUnits = Math.max(max / unit, Number.EPSILON);
  const pow = 10 ** Math.floor(Math.log10(inUnits / 5));
  // Values are whole (µcr, tokens): a step is at least 1, and rounded out of floating-point noise.
  const step = Math.max(1, Math.round([1, 2, 5, 10].map((m) => m * pow).find((s) => inUnits / s <= 5)! * unit));
  const top = Math.ceil(max / step) * step;
  return { top, ticks: Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step) };
}

export function stackedBarChart(points: Point[], days: number[], opts: { title: string; format: (v: number) => string; unit?: number }): Raw {
  if (!points.some((p) => p.value > 0))
    return html`<figure class="card" style="margin:1rem 0"><figcaption><strong>${opts.title}</strong></figcaption><p class="muted">No data in this range.</p></figure>`;
  const models = [...new Set(points.map((p) => p.model))].sort();
  const byDay = new Map<number, Map<string, number>>();
  for (const p of points) {
    if (!byDay.has(p.day)) byDay.set(p.day, new Map());
    const m = byDay.get(p.day)!;
    m.set(p.model, (m.get(p.model) ?? 0) + p.value);
  }
  const totals = days.map((d) => [...(byDay.get(d)?.values() ?? [])].reduce((a, b) => a + b, 0));
  const axis = roundAxis(Math.max(1, ...totals), opts.unit);
  const max = axis.top;
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
      bars.push(html`<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${Math.max(0.5, height).toFixed(1)}" fill="${COLORS[mi % COLORS.length]}"><title>${dayLabel(day)} · ${model}: ${opts.format(v)}</title></rect>`);
    });
    if (i % labelEvery === 0)
      bars.push(html`<text x="${(x + barW / 2).toFixed(1)}" y="${H - PAD.bottom + 14}" text-anchor="middle" font-size="10" fill="#5b6570">${dayLabel(day).slice(5)}</text>`);
  });
  const ticks = axis.ticks.map((v) => html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#dde2e7"/>
<text class="tick" x="${PAD.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="10" fill="#5b6570">${opts.format(v)}</text>`);
  const legend = models.map((m, mi) => html`<span style="margin-right:1rem"><span style="display:inline-block;width:10px;height:10px;background:${COLORS[mi % COLORS.length]}"></span> ${m}</span>`);

  return html`<figure class="card" style="margin:1rem 0"><figcaption><strong>${opts.title}</strong></figcaption>
<svg role="img" aria-label="${opts.title}" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMidYMid meet">${ticks}${bars}</svg>
<div class="muted" style="font-size:13px">${legend}</div></figure>`;
}
