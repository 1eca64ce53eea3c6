// The callback URL guard. A callback makes the gateway send a POST wherever a customer says, so without a guard a
// customer could reach the gateway's own network: loopback, private ranges, the cloud metadata service. The URL must
// be http(s) and every address its host resolves to must be public. Checked when the task is created (a 422, not a
// silent drop) and again before every delivery, because DNS answers can change in between.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

export type UrlCheck = { ok: true } | { ok: false; reason: string };

export async function checkCallbackUrl(raw: string, allowPrivate: boolean): Promise<UrlCheck> {
  const url = URL.parse(raw);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) {
    return { ok: false, reason: "must be an http(s) URL" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not contain credentials" };
  if (allowPrivate) return { ok: true };
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { ok: false, reason: `host ${host} does not resolve` };
    }
  }
  const bad = addresses.find(isNonPublicAddress);
  if (bad !== undefined) return { ok: false, reason: `resolves to a non-public address (${bad})` };
  return addresses.length ? { ok: true } : { ok: false, reason: `host ${host} does not resolve` };
}

// [first address, prefix length] of every IPv4 block a callback may not reach.
const V4_BLOCKED: Array<[string, number]> = [
  ["0.0.0.0", 8], // "this network", incl. 0.0.0.0
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, incl. the metadata service 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, incl. broadcast
];

export function isNonPublicAddress(ip: string): boolean {
  const kind = isIP(ip);
  if (kind === 4) return v4Blocked(v4ToInt(ip));
  if (kind !== 6) return true; // not an address at all: refuse rather than guess
  const words = v6Words(ip);
  if (words.every((w) => w === 0)) return true; // ::
  if (words.slice(0, 7).every((w) => w === 0) && words[7] === 1) return true; // ::1
  const first = words[0]!;
  if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((first & 0xff00) === 0xff00) return true; // multicast
  // IPv4 inside IPv6: mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d — judge the IPv4 part.
  const embedded = (words[6]! << 16) | words[7]!;
  const mapped = words.slice(0, 5).every((w) => w === 0) && (words[5] === 0xffff || words[5] === 0);
  const nat64 = first === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  if (mapped || nat64) return v4Blocked(embedded >>> 0);
  return false;
}

function v4Blocked(n: number): boolean {
  return V4_BLOCKED.some(([base, bits]) => (n >>> (32 - bits)) === (v4ToInt(base) >>> (32 - bits)));
}

function v4ToInt(ip: string): number {
  return ip.split(".").reduce((n, part) => ((n << 8) | Number(part)) >>> 0, 0);
}

function v6Words(ip: string): number[] {
  let s = ip.toLowerCase().split("%")[0]!;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const n = v4ToInt(tail[1]!);
    s = s.slice(0, -tail[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, rest] = s.split("::") as [string, string | undefined];
  const h = head ? head.split(":") : [];
  const r = rest !== undefined && rest ? rest.split(":") : [];
  const fill = rest !== undefined ? Array(8 - h.length - r.length).fill("0") : [];
  return [...h, ...fill, ...r].map((x) => parseInt(x || "0", 16));
}
