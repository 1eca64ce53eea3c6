import { microsToCredits } from "../ledger/units";

// Display helpers for dashboard pages. Display only: nothing here is fed back into money.

/** Unix ms → "2026-01-31 14:05:09" (UTC, which the pages say once in their headings). */
export function when(ms: number | null | undefined): string {
  return ms == null ? "" : new Date(Number(ms)).toISOString().replace("T", " ").slice(0, 19);
}

/** µcr → credits with up to six decimals, without float noise ("12.5", "0.000125"). */
export function credits(micros: number | null | undefined): string {
  if (micros == null) return "";
  return String(Number(microsToCredits(Number(micros)).toFixed(6)));
}

export function int(n: number | null | undefined): string {
  return n == null ? "" : Number(n).toLocaleString("en-US");
}

/** Day number (days since 1970-01-01 UTC) ↔ "YYYY-MM-DD". */
export const DAY_MS = 86_400_000;
export const dayLabel = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
export function parseDay(s: string | undefined): number | undefined {
  if (!s || !/^\d{4}-\d{2}-\d{2}$/.test(s)) return undefined;
  const ms = Date.parse(s + "T00:00:00Z");
  return Number.isNaN(ms) ? undefined : ms / DAY_MS;
}
