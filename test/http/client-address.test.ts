// What the limits by address count under (http/client-address.ts limitKeyOf): an IPv6 host owns a whole /64 and can
// send each request from another address in it, so a limit per exact address would never be reached. The /64 is the
// key; an IPv4-mapped address is its IPv4 address; a port a proxy wrote is dropped.
import { describe, expect, test } from "bun:test";
import { limitKeyOf } from "../../src/http/client-address";

describe("limitKeyOf", () => {
  test("every address of one IPv6 /64 shares one key, whatever its spelling; another /64 has its own", () => {
    const same = [
      "2001:db8:1:2::1",
      "2001:db8:1:2::f",
      "2001:DB8:1:2:ffff:1:2:3",
      "2001:0db8:0001:0002:0:0:0:1",
      "[2001:db8:1:2::9]:443",
      "2001:db8:1:2::1.2.3.4",
    ];
    expect(new Set(same.map(limitKeyOf))).toEqual(new Set(["2001:db8:1:2::/64"]));
    expect(limitKeyOf("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(limitKeyOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });

  test("an IPv4 address is its own key; its IPv4-mapped IPv6 spellings and a port count as it", () => {
    for (const a of [
      "198.51.100.7",
      "::ffff:198.51.100.7",
      "::FFFF:c633:6407",
      "198.51.100.7:5123",
      "[::ffff:198.51.100.7]:80",
    ])
      expect(limitKeyOf(a)).toBe("198.51.100.7");
    expect(limitKeyOf("198.51.100.8")).toBe("198.51.100.8");
  });

  test("something that is not an address is kept as it is (it still counts, on its own)", () => {
    for (const a of ["unknown", "not an address", "1.2.3"]) expect(limitKeyOf(a)).toBe(a);
  });
});
