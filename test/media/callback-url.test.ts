// The callback URL check with a stand-in DNS: a name is resolved once and every answer is judged, URL spellings of
// private addresses are caught, and a resolver that never answers fails within the timeout instead of hanging.
import { describe, expect, test } from "bun:test";
import { checkCallbackUrl, resolveCallbackUrl, type Resolver } from "../../src/media/ssrf";

/** A resolver answering from a table, counting its calls. */
function dns(answers: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve: Resolver = async (host) => {
    calls.push(host);
    const a = answers[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return a;
  };
  return { resolve, calls };
}

const never: Resolver = () => new Promise(() => {});

describe("checkCallbackUrl (task creation)", () => {
  const { resolve } = dns({
    "public.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "mixed.test": ["93.184.215.14", "10.0.0.7"], // one private answer is enough to refuse
    "metadata.test": ["169.254.169.254"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "sixtofour.test": ["2002:a9fe:a9fe::1"],
    "teredo.test": ["2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    "empty.test": [],
  });
  const cases: Array<[string, boolean]> = [
    ["https://public.test/hook", true],
    ["http://8.8.8.8/hook", true],
    ["http://[2606:4700:4700::1111]:8080/hook", true],
    ["http://mixed.test/hook", false],
    ["http://metadata.test/latest/meta-data", false],
    ["http://mapped.test/x", false],
    ["http://sixtofour.test/x", false],
    ["http://teredo.test/x", false],
    ["http://empty.test/x", false],
    ["http://unknown.test/x", false],
    // spellings the URL parser turns into a private address
    ["http://2130706433/x", false],
    ["http://0x7f000001/x", false],
    ["http://127.1/x", false],
    ["http://0177.0.0.1/x", false],
    ["http://[::ffff:127.0.0.1]/x", false],
    ["http://[0:0:0:0:0:ffff:a9fe:a9fe]/x", false],
    ["http://[::ffff:0:7f00:1]/x", false],
    ["http://[2002:7f00:1::]/x", false],
    ["http://[2001::1]/x", false],
    ["http://[64:ff9b::a00:1]/x", false],
    ["http://user:pw@public.test/x", false],
    ["ftp://public.test/x", false],
    ["not a url", false],
  ];
  test.each(cases)("%s → allowed %p", async (url, ok) => {
    expect((await checkCallbackUrl(url, false, { resolve })).ok).toBe(ok);
  });

  test("with private callbacks allowed the name is not resolved (as before); the URL form still is checked", async () => {
    const d = dns({});
    expect(await checkCallbackUrl("http://anything.test/x", true, { resolve: d.resolve })).toEqual({ ok: true });
    expect(d.calls).toEqual([]);
    expect((await checkCallbackUrl("ftp://anything.test/x", true, { resolve: d.resolve })).ok).toBe(false);
  });

  test("a resolver that never answers fails within the timeout", async () => {
    const started = Date.now();
    const check = await checkCallbackUrl("http://slow.test/x", false, { resolve: never, timeoutMs: 100 });
    expect(check).toEqual({ ok: false, reason: "host slow.test did not resolve within 0.1 s" });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("resolveCallbackUrl (delivery)", () => {
  test("resolves once and returns the checked addresses, which are what the request is sent to", async () => {
    const d = dns({ "public.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"] });
    const target = await resolveCallbackUrl("https://public.test:8443/hook?x=1", false, { resolve: d.resolve });
    expect(target).toMatchObject({ ok: true, addresses: ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"] });
    expect(target.ok && target.url.href).toBe("https://public.test:8443/hook?x=1");
    expect(d.calls).toEqual(["public.test"]);
  });

  test("the caller is not told what a name resolves to, nor whether it resolves at all (no map of internal DNS)", async () => {
    const { resolve } = dns({ "db.internal": ["10.1.2.3"] });
    const internal = await resolveCallbackUrl("http://db.internal/x", false, { resolve });
    const missing = await resolveCallbackUrl("http://nothing.internal/x", false, { resolve });
    expect(internal.ok || internal.reason).not.toContain("10.1.2.3");
    expect([
      internal.ok || internal.reason.replace("db.internal", "H"),
      missing.ok || missing.reason.replace("nothing.internal", "H"),
    ]).toEqual(["host H does not resolve to a public address", "host H does not resolve to a public address"]);
    expect(await resolveCallbackUrl("http://10.1.2.3/x", false, { resolve })).toMatchObject({
      ok: false,
      reason: "is a non-public address (10.1.2.3)",
    });
  });

  test("an IP literal is not resolved", async () => {
    const d = dns({});
    expect(await resolveCallbackUrl("http://[2606:4700:4700::1111]/x", false, { resolve: d.resolve })).toMatchObject({
      ok: true,
      addresses: ["2606:4700:4700::1111"],
    });
    expect(d.calls).toEqual([]);
  });

  test("a private answer is refused for good; DNS trouble is a retryable failure", async () => {
    const { resolve } = dns({ "private.test": ["192.168.0.10"] });
    expect(await resolveCallbackUrl("http://private.test/x", false, { resolve })).toEqual({
      ok: false,
      reason: "host private.test does not resolve to a public address",
      retryable: false,
      detail: "resolves to 192.168.0.10",
    });
    expect(await resolveCallbackUrl("http://gone.test/x", false, { resolve })).toEqual({
      ok: false,
      reason: "host gone.test does not resolve to a public address",
      retryable: true,
      detail: "no address",
    });
    expect(await resolveCallbackUrl("http://slow.test/x", false, { resolve: never, timeoutMs: 50 })).toEqual({
      ok: false,
      reason: "host slow.test did not resolve within 0.05 s",
      retryable: true,
    });
  });

  test("with private callbacks allowed the name is still resolved once, any address accepted, so it can be pinned", async () => {
    const d = dns({ "internal.test": ["10.1.2.3"] });
    expect(await resolveCallbackUrl("http://internal.test/x", true, { resolve: d.resolve })).toMatchObject({
      ok: true,
      addresses: ["10.1.2.3"],
    });
    expect(d.calls).toEqual(["internal.test"]);
  });

  test("an answer that is not an address is refused even when private callbacks are allowed (it cannot be pinned)", async () => {
    const { resolve } = dns({ "odd.test": ["elsewhere.test"] });
    expect(await resolveCallbackUrl("http://odd.test/x", true, { resolve })).toMatchObject({
      ok: false,
      retryable: false,
    });
  });

  test("a resolver that throws synchronously is a failed lookup, not an exception", async () => {
    const resolve: Resolver = () => {
      throw new Error("boom");
    };
    expect(await resolveCallbackUrl("http://x.test/x", false, { resolve })).toMatchObject({
      ok: false,
      retryable: true,
    });
  });
});
