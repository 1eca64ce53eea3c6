// The address table of the callback guard: every special-purpose range refused, in every spelling of an address,
// and the IPv4 address inside mapped / NAT64 / 6to4 forms judged like the IPv4 address itself.
import { describe, expect, test } from "bun:test";
import { isNonPublicAddress } from "../../src/media/special-addresses";

const blocked = [
  // IPv4
  "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.255.0.9",
  "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.9", "192.0.2.10", "192.88.99.1", "192.168.1.1",
  "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.7", "224.0.0.1", "239.255.255.250", "240.0.0.1",
  "255.255.255.255",
  // IPv6 proper
  "::", "::1", "0:0:0:0:0:0:0:1", "fc00::1", "fd12:3456::1", "fe80::1", "fe80::1%eth0", "FE80::ABCD", "febf::1",
  "fec0::1", "ff02::1", "ff0e::101", "2001:db8::1", "3fff::1", "5f00::1", "100::1", "100:0:0:1::5",
  "64:ff9b:1::a00:1", "64:ff9b:1::8.8.8.8", "1000::1", "4000::1", "8000::1", "fbff::1", "fe00::1", "1fff:ffff::1", "4000::",
  // IPv4-mapped, every spelling, of private addresses
  "::ffff:127.0.0.1", "::FFFF:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:7f00:0001", "0000:0000:0000:0000:0000:ffff:127.0.0.1",
  "::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "::ffff:10.1.2.3", "::ffff:0.0.0.0",
  // IPv4-compatible (deprecated), even of a public address
  "::127.0.0.1", "::7f00:1", "::8.8.8.8", "::a9fe:a9fe",
  // IPv4-translated ::ffff:0:a.b.c.d
  "::ffff:0:127.0.0.1", "::ffff:0:7f00:1", "::ffff:0:8.8.8.8", "0:0:0:0:ffff:0:a00:1",
  // NAT64 of private addresses
  "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1",
  // 6to4 of private addresses: 2002:AABB:CCDD:: carries AA.BB.CC.DD
  "2002:7f00:1::", "2002:7f00:0001:0:0:0:0:1", "2002:a9fe:a9fe::1", "2002:0a00:0001::", "2002:c0a8:0101:1::1", "2002:0:0::",
  // Teredo and the rest of the IETF protocol assignments block
  "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0000:ffff::", "2001:2::1", "2001:10::1", "2001:1ff:ffff::1",
  // not an address at all
  "", "example.com", "1.2.3", "::g", "[::1]",
];

const allowed = [
  "8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
  "169.253.255.255", "172.15.255.255", "172.32.0.0", "192.0.1.1", "192.0.3.1", "192.167.255.255", "192.169.0.0",
  "198.17.255.255", "198.20.0.0", "203.0.114.1", "223.255.255.255",
  "2606:4700:4700::1111", "2a00:1450:4001:82b::200e", "2001:4860:4860::8888", "2001:200::1", "2400:cb00::1",
  "::ffff:8.8.8.8", "::ffff:808:808", "0:0:0:0:0:ffff:0808:0808", "64:ff9b::8.8.8.8", "64:ff9b::808:808",
  "2002:0808:0808::1", "2002:808:808:1:2:3:4:5", "2000::1", "3ffe::1", "3fff:1000::1",
  "::ffff:8.8.8.8%eth0", "2606:4700:4700::1111%2", // a zone id does not change the address
];

describe("isNonPublicAddress", () => {
  test.each(blocked)("%p is blocked", (ip) => expect(isNonPublicAddress(ip)).toBe(true));
  test.each(allowed)("%p is allowed", (ip) => expect(isNonPublicAddress(ip)).toBe(false));
});
