// The address a request came from, for the limits by address (dashboard sign-in, and the public endpoints of
// http/by-address.ts). Without a proxy it is the connection's address. Behind a load balancer every connection
// comes from the balancer, so every client would share one address (and one client's failures would lock everyone
// out): TRUSTED_PROXY_HOPS says how many proxies append
// to X-Forwarded-For, and the address is taken that many entries from the right. Entries further left were sent
// by the client and can be anything, so they are never used; with 0 hops the header is ignored altogether.
import { isIP } from "node:net";

export function clientAddress(request: Request, socketAddress: string | undefined, trustedHops: number): string {
  const socket = socketAddress ?? "unknown";
  if (trustedHops < 1) return socket;
  const chain = (request.headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  // Fewer entries than proxies: the chain is not what the setting promises; the connection's address is the one
  // that cannot have been made up by the client.
  return chain.length >= trustedHops ? chain[chain.length - trustedHops]! : socket;
}

/**
 * What a limit by address counts under (logs keep the exact address). An IPv6 host is handed a whole /64 and may
 * send each request from another address in it, so an IPv6 address counts as its /64: per exact address, one host
 * could rotate through 2^64 addresses and never reach a limit. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, how a
 * dual-stack socket reports an IPv4 client) counts as its IPv4 address, so both spellings share one count. A proxy
 * may write a port (`a.b.c.d:port`, `[v6]:port`): it is dropped. Anything that is not an address is kept as it is.
 */
export function limitKeyOf(address: string): string {
  const bare = withoutPort(address);
  if (isIP(bare) === 4) return bare;
  if (isIP(bare) !== 6) return address;
  const words = ipv6Words(bare);
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff)
    return [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join(".");
  return (
    words
      .slice(0, 4)
      .map((w) => w.toString(16))
      .join(":") + "::/64"
  );
}

function withoutPort(address: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1]!;
  const v4WithPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(address);
  return v4WithPort ? v4WithPort[1]! : address;
}

/** The eight 16-bit words of an IPv6 address (already checked by isIP): `::` shorthand, a dotted IPv4 tail, a zone id. */
function ipv6Words(ip: string): number[] {
  let text = ip.toLowerCase().split("%")[0]!;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, -tail[0].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const headWords = head ? head.split(":") : [];
  const restWords = rest ? rest.split(":") : [];
  const words =
    rest === undefined
      ? headWords
      : [...headWords, ...Array<string>(8 - headWords.length - restWords.length).fill("0"), ...restWords];
  return words.map((w) => parseInt(w, 16));
}
