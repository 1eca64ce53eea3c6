// Sends a request for a URL to addresses resolved and checked beforehand (ssrf.ts), so the name is never resolved
// again between the check and the connection (DNS rebinding). Bun's documented way ("Connecting to a specific
// address", bun-types docs/runtime/networking/fetch.mdx): the address goes in the URL, the origin in the Host header
// and, for https, in `tls.serverName`, which Bun uses for SNI and verifies the certificate against.

import { isIP } from "node:net";

export interface PinnedTls {
  /** Extra trusted CA certificates (PEM); tests trust a self-signed receiver with it. */ ca?: string;
}

/** Connection failures before any byte of the request was sent. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ConnectionRefused"]);

export async function pinnedFetch(
  url: URL,
  addresses: string[],
  init: RequestInit,
  tls: PinnedTls = {},
): Promise<Response> {
  if (!addresses.length) throw new Error("no address to connect to");
  const headers = new Headers(init.headers);
  headers.set("host", url.host); // host[:port], the port only when it is not the scheme's default
  const named = !isIP(url.hostname.replace(/^\[|\]$/g, "")); // an IP literal has no name to send as SNI
  const options: BunFetchRequestInit = {
    ...init,
    headers,
    // Always: a redirect target is a URL nobody checked.
    redirect: "manual",
    // A proxy from the environment would be chosen by the address, not by the name, and would resolve names itself.
    proxy: false,
    ...(url.protocol === "https:" && (named || tls.ca)
      ? { tls: { ...(named ? { serverName: url.hostname } : {}), ...(tls.ca ? { ca: tls.ca } : {}) } }
      : {}),
  };
  // The next address is tried only when the previous one could not be connected to, so a request is never sent
  // twice (fetch falls back across a name's addresses itself; pinning must not lose that).
  let lastError: unknown;
  for (const address of addresses) {
    try {
      return await fetch(addressedUrl(url, address), options);
    } catch (e) {
      if (!NOT_CONNECTED.has((e as { code?: string }).code ?? "")) throw e;
      lastError = e;
    }
  }
  throw lastError;
}

/** The URL with its host replaced by the address (IPv6 in brackets); port, path and query unchanged. Built from a
 *  string rather than with the `hostname` setter, which silently keeps the old host (the name!) on a bad value. */
function addressedUrl(url: URL, address: string): URL {
  const host = isIP(address) === 6 ? `[${address}]` : address;
  const pinned = new URL(`${url.protocol}//${host}${url.port ? `:${url.port}` : ""}${url.pathname}${url.search}`);
  if (!isIP(pinned.hostname.replace(/^\[|\]$/g, ""))) throw new Error(`cannot connect to ${address}`);
  return pinned;
}
