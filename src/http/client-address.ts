// The address a request came from, for the limits by address (dashboard sign-in, and the public endpoints of
// http/by-address.ts). Without a proxy it is the connection's address. Behind a load balancer every connection
// comes from the balancer, so every client would share one address (and one client's failures would lock everyone
// out): TRUSTED_PROXY_HOPS says how many proxies append
// to X-Forwarded-For, and the address is taken that many entries from the right. Entries further left were sent
// by the client and can be anything, so they are never used; with 0 hops the header is ignored altogether.

export function clientAddress(request: Request, socketAddress: string | undefined, trustedHops: number): string {
  const socket = socketAddress ?? "unknown";
  if (trustedHops < 1) return socket;
  const chain = (request.headers.get("x-forwarded-for") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  // Fewer entries than proxies: the chain is not what the setting promises; the connection's address is the one
  // that cannot have been made up by the client.
  return chain.length >= trustedHops ? chain[chain.length - trustedHops]! : socket;
}
