// Fetching a URL an upstream handed over (a result file, fal's status and response URLs). Such a URL is data from
// outside, like a callback URL, so it gets the callback guard (ssrf.ts): the name is resolved once, every address
// must be public unless UPSTREAM_URLS_ALLOW_PRIVATE says otherwise, and the request goes to the checked addresses
// (pinned-fetch.ts). Redirects are followed here, each hop checked the same way, at most MAX_REDIRECTS of them; the
// headers given (the provider's key: Veo's `x-goog-api-key`, fal's `Authorization`) go to the first URL's origin
// only, never to wherever a redirect points.
import { pinnedFetch } from "./pinned-fetch";
import { resolveCallbackUrl, type Resolver } from "./ssrf";

export interface UrlPolicy {
  allowPrivate: boolean;
  /** Tests play a DNS server with it. */
  resolve?: Resolver;
}

/** A URL the gateway will not fetch: refused addresses or scheme, too many redirects. The same at every retry. */
export class UpstreamUrlRefused extends Error {}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function guardedFetch(
  raw: string,
  init: { headers?: Record<string, string>; signal?: AbortSignal },
  policy: UrlPolicy,
): Promise<Response> {
  const origin = URL.parse(raw)?.origin;
  let url = raw;
  let headers = init.headers; // dropped for good at the first hop to another origin
  for (let hop = 0; ; hop++) {
    const target = await resolveCallbackUrl(url, policy.allowPrivate, { resolve: policy.resolve });
    if (!target.ok) {
      const what = `upstream URL ${URL.parse(url)?.host || url.slice(0, 100)} ${target.reason}${target.detail ? ` (${target.detail})` : ""}`;
      // A DNS failure may pass; a refused address or scheme will be refused again.
      throw target.retryable ? new Error(what) : new UpstreamUrlRefused(what);
    }
    if (target.url.origin !== origin) headers = undefined;
    const res = await pinnedFetch(target.url, target.addresses, { headers, signal: init.signal });
    const location = REDIRECTS.has(res.status) ? res.headers.get("location") : null;
    if (location === null) return res;
    void res.body?.cancel().catch(() => {});
    if (hop >= MAX_REDIRECTS) throw new UpstreamUrlRefused(`upstream URL redirected more than ${MAX_REDIRECTS} times`);
    const next = URL.parse(location, target.url.href);
    if (!next) throw new UpstreamUrlRefused(`upstream URL redirected to ${location.slice(0, 100)}, which is not a URL`);
    url = next.href;
  }
}

/**
 * A response's body, refused with `tooLarge()` once it passes `limit` bytes: by its stated length before reading, else
 * as it arrives (a chunked answer states none, and reading it whole first could take any amount of memory).
 */
export async function bodyUpTo(res: Response, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  const stated = res.headers.get("content-length");
  if (stated !== null && Number(stated) > limit) {
    void res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (stated !== null) return new Uint8Array(await res.arrayBuffer());
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of (res.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
    size += part.byteLength;
    if (size > limit) throw tooLarge(); // leaving the loop cancels the download
    parts.push(part);
  }
  return new Uint8Array(Bun.concatArrayBuffers(parts));
}
