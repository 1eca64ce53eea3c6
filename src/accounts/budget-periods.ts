import type { BudgetPeriod } from "./policy";

// The calendar of a key's budget, in UTC: a day starts at 00:00, a week on Monday 00:00, a month on its 1st at
// 00:00; a lifetime never resets. `now` is passed in everywhere, so the boundaries are tested with any clock.

const DAY_MS = 86_400_000;

/** When the period holding `now` began (Unix ms); a lifetime holds everything (0). */
export function periodStart(period: BudgetPeriod, now: number): number {
  const date = new Date(now);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  switch (period) {
    case "day":
      return midnight;
    case "week":
      return midnight - ((date.getUTCDay() + 6) % 7) * DAY_MS; // getUTCDay: Sunday 0, so Monday is 0 days back
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    case "lifetime":
      return 0;
  }
}

/** When the period holding `now` ends and the next begins (Unix ms); null for a lifetime. */
export function periodReset(period: BudgetPeriod, now: number): number | null {
  const date = new Date(now);
  switch (period) {
    case "day":
      return periodStart("day", now) + DAY_MS;
    case "week":
      return periodStart("week", now) + 7 * DAY_MS;
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    case "lifetime":
      return null;
  }
}
