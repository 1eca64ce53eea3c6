import { createHmac, timingSafeEqual } from "node:crypto";

// How the media engine's callbacks are signed, in one place so the sender (callbacks.ts) and the documentation
// (discovery/auth-md.ts, /auth.md) cannot disagree:
//   X-Webhook-Timestamp: Unix time in whole seconds
//   X-Webhook-Signature: base64( HMAC-SHA256( key = the account's signing key as UTF-8 (the whole `whsec_…` string),
//                                             message = `${taskId}.${timestamp}` ) )
// Receivers should refuse timestamps more than WEBHOOK_TOLERANCE_SECONDS away from their clock (replays).

export const WEBHOOK_TOLERANCE_SECONDS = 300;

export function signCallback(
  signingKey: string,
  taskId: string,
  timestampSeconds: number,
): { "X-Webhook-Timestamp": string; "X-Webhook-Signature": string } {
  const timestamp = String(Math.floor(timestampSeconds));
  const signature = createHmac("sha256", signingKey).update(`${taskId}.${timestamp}`).digest("base64");
  return { "X-Webhook-Timestamp": timestamp, "X-Webhook-Signature": signature };
}

/** Checks a callback the way /auth.md tells receivers to (used by tests; receivers copy the example there). */
export function verifyCallback(
  signingKey: string,
  taskId: string,
  timestamp: string,
  signature: string,
  nowMs = Date.now(),
): boolean {
  if (!/^\d+$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) return false;
  const expected = createHmac("sha256", signingKey).update(`${taskId}.${timestamp}`).digest();
  const given = Buffer.from(signature, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
