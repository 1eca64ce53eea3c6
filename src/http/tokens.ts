import { timingSafeEqual } from "node:crypto";

// The pieces every token guard shares: reading `Authorization: Bearer <token>`, and comparing secrets in constant
// time (a plain === leaks, through timing, how much of a guessed token was right).

export function bearerToken(headers: Headers): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(headers.get("authorization")?.trim() ?? "");
  return m?.[1]!.trim() || undefined;
}

export function safeEqual(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
