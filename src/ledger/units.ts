// Money units. The ledger stores integers only: micro-credits (µcr).
//   1 credit = 0.001 USD = 1_000_000 µcr,  so 1 USD = 1_000_000_000 µcr.
// A price of X USD per million tokens is X * 1000 µcr per token, an exact integer whenever X has at most three
// decimals; that is why the unit was chosen. Nothing in money is ever a float after this file.

export const MICROS_PER_CREDIT = 1_000_000;
export const MICROS_PER_USD = 1_000_000_000;

/** Parse a decimal USD amount (number or string from a data file) into exact µcr; refuses sub-µcr precision. */
export function usdToMicros(usd: number | string): number {
  return decimalToInteger(usd, 9, "USD amount");
}

/** USD per million tokens → µcr per token (exact; at most three decimals allowed). */
export function usdPerMillionToMicrosPerToken(usdPerMillion: number | string): number {
  return decimalToInteger(usdPerMillion, 3, "USD per million tokens");
}

/** USD per 1,000 calls (a tool's per-use fee) → µcr per call (exact; at most six decimals allowed). */
export function usdPerThousandToMicrosPerCall(usdPerThousand: number | string): number {
  return decimalToInteger(usdPerThousand, 6, "USD per 1,000 calls");
}

/** Whole or fractional credits (as a user types them in JSON) → µcr, exact to six decimals. */
export function creditsToMicros(credits: number | string): number {
  return decimalToInteger(credits, 6, "credit amount");
}

/** The largest budget that is still an exact number of µcr (2^53 − 1 µcr, about 9.0e9 credits). */
export const MAX_BUDGET_CREDITS = Math.floor(Number.MAX_SAFE_INTEGER / MICROS_PER_CREDIT);
export const MAX_CREDITS_RULE = `max_credits must be a non-negative number of credits with at most 6 decimals, at most ${MAX_BUDGET_CREDITS}.`;

/**
 * A caller's `max_credits` (the budget guard of every LLM endpoint and media task) as µcr; undefined when absent.
 * One rule for both: a non-negative number (or decimal string) of credits with at most 6 decimals, exact, never
 * rounded (a budget is money). Anything else throws a RangeError, which each surface turns into its own 4xx.
 */
export function maxCreditsToMicros(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" && typeof v !== "string") throw new RangeError(MAX_CREDITS_RULE);
  let micros: number;
  try {
    micros = creditsToMicros(v);
  } catch {
    throw new RangeError(MAX_CREDITS_RULE);
  }
  if (micros < 0 || micros > MAX_BUDGET_CREDITS * MICROS_PER_CREDIT) throw new RangeError(MAX_CREDITS_RULE);
  return micros;
}

/** µcr → credits as a decimal number for JSON answers (display only; never fed back into money). */
export function microsToCredits(micros: number): number {
  return micros / MICROS_PER_CREDIT;
}

/** µcr → USD as a decimal number for JSON answers (display only). */
export function microsToUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}

/** Round µcr up to a whole credit (media tasks are billed in whole credits). */
export function ceilToWholeCredit(micros: number): number {
  return Math.ceil(micros / MICROS_PER_CREDIT) * MICROS_PER_CREDIT;
}

/**
 * Exact decimal → integer scaling by 10^scale using the decimal text, never float multiplication.
 * Throws on more decimals than the scale allows, on non-finite values and on results beyond 2^53.
 */
export function decimalToInteger(value: number | string, scale: number, what = "amount"): number {
  const text = typeof value === "number" ? numberToPlainString(value) : value.trim();
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new RangeError(`${what} is not a decimal number: ${JSON.stringify(value)}`);
  const [, sign, whole, frac = ""] = m;
  const trimmed = frac.replace(/0+$/, "");
  if (trimmed.length > scale) throw new RangeError(`${what} has more than ${scale} decimals: ${text}`);
  const digits = BigInt(whole + trimmed.padEnd(scale, "0"));
  const result = Number(sign === "-" ? -digits : digits);
  if (!Number.isSafeInteger(result)) throw new RangeError(`${what} is too large: ${text}`);
  return result;
}

function numberToPlainString(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  // toString gives exponent form for very small/large numbers; toFixed(20) then trimming handles those.
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/\.?0+$/, "");
}
