// The callback URL guard. A callback makes the gateway POST wherever a customer says, so without a guard a customer
// could reach the gateway's own network (loopback, private ranges, the cloud metadata service). The URL must be
// http(s) and every address its host resolves to public (special-addresses.ts): checked at task creation (a 422,
// not a silent drop) and again at every delivery, where the name is resolved once and the request sent to the
// checked addresses (pinned-fetch.ts); letting fetch resolve it again would let a low-TTL name answer a public
// address to the check and 127.0.0.1 to the send (DNS rebinding).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isNonPublicAddress } from "./special-addresses";

/** Resolves a host name to its addresses. Injectable so tests can play a DNS server. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** getaddrinfo has no timeout of its own; a stuck resolver must not hold a delivery (or a task creation) forever. */
export const DNS_TIMEOUT_MS = 5_000;

export interface ResolveOptions {
  resolve?: Resolver;
  timeoutMs?: number;
}

export type UrlCheck = { ok: true } | { ok: false; reason: string };

/** The checked addresses to send to, or why not; `retryable` when DNS failed rather than the URL being refused. */
/** `reason` is shown to the caller; `detail`, what a name resolved to, is for the operator's log only. */
export type CallbackTarget =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: string; retryable: boolean; detail?: string };

/** The check at task creation. With private callbacks allowed the name is not resolved at all. */
export async function checkCallbackUrl(
  raw: string,
  allowPrivate: boolean,
  opts: ResolveOptions = {},
): Promise<UrlCheck> {
  const url = parseCallbackUrl(raw);
  if (!url.ok) return url;
  if (allowPrivate) return { ok: true };
  const target = await resolveCallbackUrl(raw, false, opts);
  return target.ok ? { ok: true } : { ok: false, reason: target.reason };
}

/** The check at delivery: resolve once and return the addresses the request must go to. */
export async function resolveCallbackUrl(
  raw: string,
  allowPrivate: boolean,
  opts: ResolveOptions = {},
): Promise<CallbackTarget> {
  const parsed = parseCallbackUrl(raw);
  if (!parsed.ok) return { ...parsed, retryable: false };
  const { url } = parsed;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) {
    if (!allowPrivate && isNonPublicAddress(host))
      return { ok: false, reason: `is a non-public address (${host})`, retryable: false };
    return { ok: true, url, addresses: [host] };
  }
  const timeoutMs = opts.timeoutMs ?? DNS_TIMEOUT_MS;
  const answer = await resolveWithin(opts.resolve ?? systemResolver, host, timeoutMs);
  if (answer === "timeout")
    return { ok: false, reason: `host ${host} did not resolve within ${timeoutMs / 1000} s`, retryable: true };
  // One answer for a name that does not resolve and one that resolves to a private address, without the address:
  // else any key holder could map the gateway's internal DNS (db.internal → 10.x.y.z) through this error.
  const notPublic = `host ${host} does not resolve to a public address`;
  if (answer === "failed" || !answer.length)
    return { ok: false, reason: notPublic, retryable: true, detail: "no address" };
  // Even when private addresses are allowed, only addresses can be pinned: a resolver answering a name is refused.
  const bad = answer.find((a) => !isIP(a) || (!allowPrivate && isNonPublicAddress(a)));
  if (bad !== undefined) return { ok: false, reason: notPublic, retryable: false, detail: `resolves to ${bad}` };
  return { ok: true, url, addresses: answer };
}

function parseCallbackUrl(raw: string): { ok: true; url: URL } | { ok: false; reason: string } {
  const url = URL.parse(raw);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) {
    return { ok: false, reason: "must be an http(s) URL" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not contain credentials" };
  return { ok: true, url };
}

async function resolveWithin(
  resolve: Resolver,
  host: string,
  timeoutMs: number,
): Promise<string[] | "timeout" | "failed"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((done) => (timer = setTimeout(() => done("timeout"), timeoutMs)));
  // The lookup itself cannot be cancelled; a late answer or error is simply ignored (race has handled it).
  const answer = (async () => resolve(host))().catch(() => "failed" as const);
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
