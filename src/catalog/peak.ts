// Time-of-day prices (`pricing.peak`): a provider that bills more in set hours of the week (DeepSeek: weekdays
// 09:00–12:00 and 14:00–18:00 Beijing time, statutory holidays excepted, at twice the off-peak price). The entry's
// ordinary prices are the off-peak ones; the peak block holds the schedule and the prices in it. A call is held at
// the peak price (it is not yet known when the upstream will be reached) and posted at the price of the period in
// which the gateway sent it upstream (proxy.ts openCall stamps it with modelAt).

import { FieldError, isDay } from "./lifecycle";
import type { LlmModel, TokenPriceSet } from "./model";

/** The schedule of a peak block, compiled: every time in minutes, every date in the schedule's own clock. */
export interface PeakSchedule {
  /** the schedule's clock: UTC plus this many minutes (DeepSeek: +480, Beijing time) */
  offsetMinutes: number;
  /** days of the week with peak hours, 0 = Sunday … 6 = Saturday */
  days: number[];
  /** [start, end) minutes after midnight, sorted, not overlapping */
  windows: Array<[number, number]>;
  /** YYYY-MM-DD dates off-peak all day (a provider's holidays) */
  holidays: Set<string>;
  /** the last date the holiday list covers (absent: no holidays are listed) */
  holidaysThrough?: string;
}

export type PeakPrices = TokenPriceSet & { schedule: PeakSchedule };

export const PEAK_SCHEDULE_KEYS = ["utc_offset", "days", "windows", "holidays", "holidays_through"];
export const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const OFFSET = /^([+-])(\d\d):(\d\d)$/;
const TIME = /^(\d\d):(\d\d)$/;

/** The schedule of `peak` (the entry's `pricing.peak`), or a FieldError naming the field that is wrong. */
export function peakSchedule(peak: Record<string, any>): PeakSchedule {
  const f = (k: string) => `pricing.peak.${k}`;
  const offset = typeof peak.utc_offset === "string" ? OFFSET.exec(peak.utc_offset) : null;
  if (!offset || Number(offset[2]) > 14 || Number(offset[3]) > 59)
    throw new FieldError(
      f("utc_offset"),
      `must be "+HH:MM" or "-HH:MM" (UTC+08:00 is "+08:00"), not ${show(peak.utc_offset)}`,
    );
  const offsetMinutes = (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3]));
  if (!Array.isArray(peak.days) || !peak.days.length)
    throw new FieldError(f("days"), `must be a list of days of the week (${DAY_NAMES.join(", ")})`);
  const days = peak.days.map((d: unknown, i: number) => {
    const n = DAY_NAMES.indexOf(d as string);
    if (n === -1) throw new FieldError(`${f("days")}[${i}]`, `${show(d)} is not one of ${DAY_NAMES.join(", ")}`);
    if (peak.days.indexOf(d) !== i) throw new FieldError(`${f("days")}[${i}]`, `${show(d)} is listed twice`);
    return n;
  });
  if (!Array.isArray(peak.windows) || !peak.windows.length)
    throw new FieldError(f("windows"), 'must be a list of ["HH:MM", "HH:MM"] windows');
  const windows = peak.windows.map((w: unknown, i: number): [number, number] => {
    const field = `${f("windows")}[${i}]`;
    if (!Array.isArray(w) || w.length !== 2) throw new FieldError(field, `must be ["HH:MM", "HH:MM"], not ${show(w)}`);
    const [start, end] = [minutes(w[0], field), minutes(w[1], field)];
    if (start >= end)
      throw new FieldError(field, `ends before it starts (${w[0]}–${w[1]}); a window past midnight is two windows`);
    return [start, end];
  });
  const order = windows.map((w, i) => ({ w, i })).sort((a, b) => a.w[0] - b.w[0]);
  for (let k = 1; k < order.length; k++)
    if (order[k]!.w[0] < order[k - 1]!.w[1])
      throw new FieldError(`${f("windows")}[${order[k]!.i}]`, `overlaps window ${order[k - 1]!.i}`);
  const holidays = peak.holidays ?? [];
  if (!Array.isArray(holidays)) throw new FieldError(f("holidays"), "must be a list of YYYY-MM-DD dates");
  const through = peak.holidays_through;
  if (through !== undefined && !isDay(through))
    throw new FieldError(f("holidays_through"), `must be a YYYY-MM-DD date, not ${show(through)}`);
  if (holidays.length && through === undefined)
    throw new FieldError(f("holidays_through"), "is required with holidays: the last date the list covers");
  holidays.forEach((d: unknown, i: number) => {
    if (!isDay(d)) throw new FieldError(`${f("holidays")}[${i}]`, `must be a YYYY-MM-DD date, not ${show(d)}`);
    if (d > through) throw new FieldError(`${f("holidays")}[${i}]`, `${d} is after holidays_through (${through})`);
  });
  return {
    offsetMinutes,
    days,
    windows: order.map((o) => o.w),
    holidays: new Set(holidays),
    ...(through !== undefined && { holidaysThrough: through }),
  };
}

/** Whether `ms` (epoch milliseconds) falls in the schedule's peak hours. */
export function isPeakAt(s: PeakSchedule, ms: number): boolean {
  const local = new Date(ms + s.offsetMinutes * 60_000);
  if (!s.days.includes(local.getUTCDay())) return false;
  if (s.holidays.size && s.holidays.has(local.toISOString().slice(0, 10))) return false;
  const minute = local.getUTCHours() * 60 + local.getUTCMinutes();
  return s.windows.some(([start, end]) => minute >= start && minute < end);
}

/**
 * The model as a call sent upstream at `ms` is billed: its peak or off-peak prices, with no schedule left to
 * consult. A model without time-of-day prices is returned as it is.
 */
export function modelAt(model: LlmModel, ms: number): LlmModel {
  const { peak, ...offPeak } = model.prices;
  if (!peak) return model;
  if (!isPeakAt(peak.schedule, ms)) return { ...model, prices: offPeak };
  const { schedule: _s, ...inPeak } = peak;
  return { ...model, prices: offPeak.webSearch === undefined ? inPeak : { ...inPeak, webSearch: offPeak.webSearch } };
}

/** How many days before a holiday list ends the operator is told to list the next year's dates. */
export const HOLIDAY_NOTICE_DAYS = 30;

/**
 * The models whose holiday list ends within HOLIDAY_NOTICE_DAYS of `today` (YYYY-MM-DD) or has ended: after it, a
 * weekday holiday bills at the peak price until the operator lists the new year's dates (the State Council publishes
 * them late in the year before). `days_left`: days the list still covers after today (negative: ended).
 * Named at startup (bootstrap.ts) and by `catalog:check` (drift.ts).
 */
export function holidayListsEnding(
  models: LlmModel[],
  today: string,
): Array<{ model: string; holidays_through: string; days_left: number }> {
  const ending = [];
  for (const m of models) {
    const through = m.prices.peak?.schedule.holidaysThrough;
    if (through === undefined) continue;
    const daysLeft = (Date.parse(through) - Date.parse(today)) / 86_400_000;
    if (daysLeft < HOLIDAY_NOTICE_DAYS) ending.push({ model: m.id, holidays_through: through, days_left: daysLeft });
  }
  return ending;
}

/** The schedule in words, for the pricing page and the model card. */
export function describeSchedule(s: PeakSchedule): string {
  const clock = (m: number) => `${pad(Math.floor(m / 60))}:${pad(m % 60)}`;
  const sign = s.offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(s.offsetMinutes);
  const zone = `UTC${sign}${clock(abs)}`;
  const days = s.days.map((d) => DAY_NAMES[d]).join(", ");
  const hours = s.windows.map(([a, b]) => `${clock(a)}–${clock(b)}`).join(" and ");
  const holidays = s.holidaysThrough ? `, except the holidays listed (the list runs through ${s.holidaysThrough})` : "";
  return `Peak hours: ${hours} ${zone} on ${days}${holidays}; every other hour is off-peak. A call is billed at the price of the period in which the gateway sent it upstream, and held at the peak price.`;
}

function minutes(v: unknown, field: string): number {
  const m = typeof v === "string" ? TIME.exec(v) : null;
  const total = m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  if (!m || Number(m[2]) > 59 || total > 24 * 60)
    throw new FieldError(field, `${show(v)} is not a time of day "HH:MM" (00:00 to 24:00)`);
  return total;
}

const pad = (n: number) => String(n).padStart(2, "0");
const show = (v: unknown) => JSON.stringify(v);
