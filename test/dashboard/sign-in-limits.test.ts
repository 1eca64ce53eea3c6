import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, PASSWORD } from "../support/dashboard";
import { clearOfWindowEdge } from "../support/rate-windows";

// These tests hash passwords or start processes (seconds on a busy machine); in a full run bun 1.4.5 has been
// seen timing one out at its own 5 s default despite the preload's setDefaultTimeout, so the file sets it again.
setDefaultTimeout(30_000);

// Sign-in under attack: one address trying many accounts, a flood of password checks, and an attacker trying to
// lock someone else out of their account (which takes the client's real address, behind a proxy too).

const gateways: TestGateway[] = [];
const gateway = async (env: Record<string, string>) => {
  const gw = await startGateway(env);
  gateways.push(gw);
  return gw;
};
afterAll(() => Promise.all(gateways.map((g) => g.stop())));

const signInAttempt = (gw: TestGateway, email: string, password: string, headers: Record<string, string> = {}) =>
  fetch(gw.url + "/dashboard/login", {
    method: "POST",
    headers,
    body: new URLSearchParams({ email, password }),
    redirect: "manual",
  });

async function expectTooMany(r: Response) {
  expect(r.status).toBe(429);
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await r.text()).toContain("Too many sign-in attempts");
}

describe("per client address, across emails", () => {
  test("one address trying a different email each time is refused after LOGIN_ADDRESS_RATE_LIMIT attempts", async () => {
    const gw = await gateway({ LOGIN_RATE_LIMIT: "100/60s", LOGIN_ADDRESS_RATE_LIMIT: "3/60s" });
    const { email } = await dashboardUser(gw);
    await clearOfWindowEdge(60, 3_000); // every attempt below in one 60 s window
    for (let i = 0; i < 3; i++)
      expect((await signInAttempt(gw, `guess-${i}@example.com`, "password-guess")).status).toBe(401);
    await expectTooMany(await signInAttempt(gw, "guess-4@example.com", "password-guess"));
    await expectTooMany(await signInAttempt(gw, email, PASSWORD)); // even the right password waits
  });
});

describe("per client address: an IPv6 /64 is one address", () => {
  test("guesses at many emails from addresses across one /64 reach LOGIN_ADDRESS_RATE_LIMIT", async () => {
    const gw = await gateway({
      LOGIN_RATE_LIMIT: "100/60s",
      LOGIN_ADDRESS_RATE_LIMIT: "3/60s",
      TRUSTED_PROXY_HOPS: "1",
    });
    await clearOfWindowEdge(60, 3_000); // every attempt below in one 60 s window
    const from = (i: number) => ({ "x-forwarded-for": `2001:db8:7:8::${i.toString(16)}` });
    for (let i = 1; i <= 3; i++)
      expect((await signInAttempt(gw, `guess-${i}@example.com`, "password-guess", from(i))).status).toBe(401);
    await expectTooMany(await signInAttempt(gw, "guess-4@example.com", "password-guess", from(0xffff)));
    // the same client over IPv4-mapped IPv6 and over IPv4 is one address too
    const v4 = await gateway({
      LOGIN_RATE_LIMIT: "100/60s",
      LOGIN_ADDRESS_RATE_LIMIT: "2/60s",
      TRUSTED_PROXY_HOPS: "1",
    });
    expect(
      (await signInAttempt(v4, "a@example.com", "password-guess", { "x-forwarded-for": "198.51.100.9" })).status,
    ).toBe(401);
    expect(
      (await signInAttempt(v4, "b@example.com", "password-guess", { "x-forwarded-for": "::ffff:198.51.100.9" })).status,
    ).toBe(401);
    await expectTooMany(
      await signInAttempt(v4, "c@example.com", "password-guess", { "x-forwarded-for": "198.51.100.9" }),
    );
  });
});

describe("password checks at once", () => {
  test("a flood of sign-ins gets 429 beyond the cap, never a 500; sign-in works again right after", async () => {
    const gw = await gateway({ LOGIN_RATE_LIMIT: "1000/60s", LOGIN_ADDRESS_RATE_LIMIT: "1000/60s" });
    const { email } = await dashboardUser(gw);
    const flood = await Promise.all(
      Array.from({ length: 24 }, (_, i) => signInAttempt(gw, `flood-${i}@example.com`, "password-guess")),
    );
    const statuses = flood.map((r) => r.status);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    const refused = flood.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(statuses).toContain(401); // up to the cap, passwords are still checked
    for (const r of refused) await expectTooMany(r);
    expect((await signInAttempt(gw, email, PASSWORD)).status).toBe(303);
  });
});

describe("an attacker cannot lock someone else out", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await gateway({ LOGIN_RATE_LIMIT: "3/60s", TRUSTED_PROXY_HOPS: "1" });
  });
  const via = (client: string) => ({ "x-forwarded-for": client });

  test("behind a proxy (TRUSTED_PROXY_HOPS=1): the attacker's failures on an email do not refuse its owner", async () => {
    const { email } = await dashboardUser(gw);
    await clearOfWindowEdge(60, 3_000); // every attempt below in one 60 s window
    for (let i = 0; i < 3; i++)
      expect((await signInAttempt(gw, email, "wrong-" + i, via("203.0.113.7"))).status).toBe(401);
    await expectTooMany(await signInAttempt(gw, email, "wrong-3", via("203.0.113.7")));
    expect((await signInAttempt(gw, email, PASSWORD, via("198.51.100.2"))).status).toBe(303);
  });

  test("an address the client puts in X-Forwarded-For itself is not believed", async () => {
    const { email } = await dashboardUser(gw);
    await clearOfWindowEdge(60, 3_000); // every attempt below in one 60 s window
    for (let i = 0; i < 3; i++)
      expect((await signInAttempt(gw, email, "wrong-" + i, via("203.0.113.8"))).status).toBe(401);
    // The proxy appends the real address; what the client sent stays to its left and is ignored.
    await expectTooMany(await signInAttempt(gw, email, PASSWORD, via("198.51.100.3, 203.0.113.8")));
  });

  test("an IPv6 client counts by its /64: a new address of the same /64 for each guess does not buy more", async () => {
    const { email } = await dashboardUser(gw);
    await clearOfWindowEdge(60, 3_000); // every attempt below in one 60 s window
    const from = (i: number) => via(`2001:db8:1:2::${i.toString(16)}`);
    for (let i = 1; i <= 3; i++) expect((await signInAttempt(gw, email, "wrong-" + i, from(i))).status).toBe(401);
    for (let i = 4; i <= 15; i++) await expectTooMany(await signInAttempt(gw, email, "wrong-" + i, from(i)));
    // another /64 is another client
    expect((await signInAttempt(gw, email, PASSWORD, via("2001:db8:1:3::1"))).status).toBe(303);
  });

  test("without TRUSTED_PROXY_HOPS the header is ignored: changing it does not buy more attempts", async () => {
    const direct = await gateway({ LOGIN_RATE_LIMIT: "3/60s" });
    const { email } = await dashboardUser(direct);
    await clearOfWindowEdge(60, 3_000);
    for (let i = 0; i < 3; i++)
      expect((await signInAttempt(direct, email, "wrong-" + i, via(`203.0.113.${i}`))).status).toBe(401);
    await expectTooMany(await signInAttempt(direct, email, PASSWORD, via("203.0.113.99")));
  });
});
