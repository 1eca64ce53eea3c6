// The addresses a callback may not reach: loopback, private and link-local networks, the cloud metadata service,
// and every other special-purpose range of IANA's registries that is not a normal public host. Kept as data: a
// range is added by adding a row. IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that
// address, because the packet ends up there; forms nobody should legitimately use (IPv4-compatible,
// IPv4-translated, Teredo) are refused, and so is all IPv6 space outside global unicast.
import { isIP } from "node:net";

/** "blocked", or "judge the IPv4 address stored at this bit offset". */
type Verdict = "blocked" | { ipv4At: number };

const IPV4_BLOCKED: string[] = [
  "0.0.0.0/8", // "this network", incl. 0.0.0.0 (which connects to the local host)
  "10.0.0.0/8", // private
  "100.64.0.0/10", // shared address space (CGNAT)
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local, incl. the metadata service 169.254.169.254
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation (TEST-NET-1)
  "192.88.99.0/24", // 6to4 relay anycast, deprecated (RFC 7526)
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation (TEST-NET-2)
  "203.0.113.0/24", // documentation (TEST-NET-3)
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, incl. the broadcast address 255.255.255.255
];

// The first matching row decides, so the forms judged by their IPv4 address come before the blocks holding them.
const IPV6_SPECIAL: Array<[string, Verdict]> = [
  ["::ffff:0:0/96", { ipv4At: 96 }], // IPv4-mapped ::ffff:a.b.c.d
  ["64:ff9b::/96", { ipv4At: 96 }], // NAT64 well-known prefix (RFC 6052)
  ["2002::/16", { ipv4At: 16 }], // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 is the IPv4 address AA.BB.CC.DD
  // Special-purpose blocks inside global unicast 2000::/3.
  ["2001::/23", "blocked"], // IETF protocol assignments: Teredo 2001::/32 (tunnels to an IPv4 address), benchmarking, ORCHID
  ["2001:db8::/32", "blocked"], // documentation
  ["3fff::/20", "blocked"], // documentation (RFC 9637)
  // Everything outside global unicast 2000::/3, the only space IANA hands out for public hosts. That covers ::,
  // ::1, IPv4-compatible ::a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d, local-use NAT64 64:ff9b:1::/48,
  // discard-only 100::/64, SRv6 5f00::/16, unique local fc00::/7, link-local fe80::/10, site-local fec0::/10,
  // multicast ff00::/8, and whatever is still unassigned.
  ["::/3", "blocked"],
  ["4000::/2", "blocked"],
  ["8000::/1", "blocked"],
];

interface Range {
  base: bigint;
  bits: number;
  verdict: Verdict;
}

const v4Ranges: Range[] = IPV4_BLOCKED.map((cidr) => range(cidr, 32, parseIpv4, "blocked"));
const v6Ranges: Range[] = IPV6_SPECIAL.map(([cidr, verdict]) => range(cidr, 128, parseIpv6, verdict));

/** True for anything a callback may not be sent to, including a string that is not an IP address at all. */
export function isNonPublicAddress(ip: string): boolean {
  const kind = isIP(ip);
  if (kind === 4) return inAny(parseIpv4(ip), 32, v4Ranges) !== undefined;
  if (kind !== 6) return true; // not an address: refuse rather than guess
  const n = parseIpv6(ip);
  const hit = inAny(n, 128, v6Ranges);
  if (hit === undefined) return false;
  if (hit.verdict === "blocked") return true;
  const ipv4 = (n >> BigInt(128 - 32 - hit.verdict.ipv4At)) & 0xffffffffn;
  return inAny(ipv4, 32, v4Ranges) !== undefined;
}

function inAny(n: bigint, width: number, ranges: Range[]): Range | undefined {
  return ranges.find((r) => n >> BigInt(width - r.bits) === r.base >> BigInt(width - r.bits));
}

function range(cidr: string, width: number, parse: (ip: string) => bigint, verdict: Verdict): Range {
  const [ip, bits] = cidr.split("/") as [string, string];
  const r = { base: parse(ip), bits: Number(bits), verdict };
  if (!(r.bits >= 0 && r.bits <= width)) throw new Error(`bad range ${cidr}`);
  return r;
}

/** A dotted quad (already validated by isIP) as a 32-bit number. */
function parseIpv4(ip: string): bigint {
  return ip.split(".").reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

/** Any spelling of an IPv6 address (already validated by isIP): `::` shorthand, a dotted IPv4 tail, a zone id. */
function parseIpv6(ip: string): bigint {
  let s = ip.toLowerCase().split("%")[0]!;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const v4 = parseIpv4(tail[1]!);
    s = s.slice(0, -tail[1]!.length) + `${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, rest] = s.split("::") as [string, string | undefined];
  const h = head ? head.split(":") : [];
  const r = rest ? rest.split(":") : [];
  const words = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - r.length).fill("0"), ...r];
  return words.reduce((n, w) => (n << 16n) | BigInt(parseInt(w, 16)), 0n);
}
