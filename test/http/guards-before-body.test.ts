// A caller the gateway is going to refuse is refused before its body is read: without the admin token, without an
// API key on the media task routes, over its address's public limit, over its sign-in limit, or posting a dashboard
// form from another site or without a session. Before, Elysia's parse phase read and parsed up to
// MAX_REQUEST_BODY_MB (128 MiB) first, so anyone could make the gateway hold that much per connection. And the
// routes that take a few fields (admin API, dashboard, estimate, upstream notices) take at most 1 MiB.
//
// Each refusal is shown on a request whose headers state a body that never comes: an answer at all, within a
// moment, means nothing waited for the body (reading it would end in a 408 after REQUEST_BODY_TIMEOUT_SECONDS).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";
import { clearOfWindowEdge } from "../support/rate-windows";
import { errorOf } from "../support/json";

const MiB = 1024 ** 2;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    REQUEST_BODY_TIMEOUT_SECONDS: "5",
    TRUSTED_PROXY_HOPS: "1", // each test its own client address
    PUBLIC_RATE_LIMIT: "2/60s",
    LOGIN_ADDRESS_RATE_LIMIT: "2/60s",
  });
});
afterAll(() => gw.stop());

/** Sends only the headers of a POST stating a `length`-byte body; what came back, and how soon (ms). */
async function withoutBody(path: string, headers: Record<string, string>, length = 512 * 1024) {
  const chunks: Buffer[] = [];
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(gw.url).port),
    socket: { data: (_s, d) => void chunks.push(Buffer.from(d)) },
  });
  const started = performance.now();
  const extra = Object.entries({ "content-type": "application/json", ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\n${extra}\r\n`);
  const answered = () => {
    const bytes = Buffer.concat(chunks);
    const head = bytes.indexOf("\r\n\r\n");
    if (head < 0) return false;
    const stated = /content-length: (\d+)/i.exec(bytes.subarray(0, head).toString())?.[1];
    return stated === undefined ? bytes.toString().endsWith("0\r\n\r\n") : bytes.length >= head + 4 + Number(stated);
  };
  for (let i = 0; i < 150 && !answered(); i++) await Bun.sleep(20);
  const answeredAfter = performance.now() - started;
  socket.end();
  const text = Buffer.concat(chunks).toString();
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  return {
    status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]),
    head: text.slice(0, text.indexOf("\r\n\r\n")),
    body,
    answeredAfter,
  };
}

const json = (text: string) => JSON.parse(text);

describe("the admin API", () => {
  test("without the token: 401 before the body is read, on every route, whatever the body", async () => {
    for (const path of ["/admin/v1/accounts", "/admin/v1/accounts/acct_x/credits", "/admin/v1/accounts/acct_x/users"]) {
      const r = await withoutBody(path, { authorization: "Bearer wrong-token-0123456789" });
      expect(r.status).toBe(401);
      expect(r.answeredAfter).toBeLessThan(2000);
      expect(json(r.body).error.code).toBe("invalid_admin_token");
    }
    // malformed JSON says nothing either: the token is checked first
    const bad = await fetch(gw.url + "/admin/v1/accounts", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(bad.status).toBe(401);
    const big = await fetch(gw.url + "/admin/v1/accounts", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":"' + "x".repeat(16 * MiB) + '"}',
    });
    expect(big.status).toBe(401);
    expect((await fetch(gw.url + "/admin/v1/accounts")).status).toBe(401); // routes without a body too
  });

  test("with the token: bodies up to 1 MiB, a larger one gets 413 in the API's shape", async () => {
    const r = await gw.admin("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ name: "x".repeat(MiB) }) });
    expect(r.status).toBe(413);
    expect((await errorOf(r)).error).toMatchObject({
      code: "request_too_large",
      message: expect.stringContaining("1 MiB"),
    });
    const stated = await withoutBody("/admin/v1/accounts", { authorization: `Bearer ${ADMIN_TOKEN}` }, 2 * MiB);
    expect(stated.status).toBe(413);
    expect(
      (await gw.admin("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ name: "Ada", credits: 1 }) }))
        .status,
    ).toBe(201);
  });
});

test("the media task routes: without a key, 401 in the task envelope before the body is read", async () => {
  const r = await withoutBody("/api/v1/jobs/createTask", {}, 64 * MiB);
  expect(r.status).toBe(401);
  expect(r.answeredAfter).toBeLessThan(2000);
  expect(json(r.body)).toMatchObject({ code: 401, data: null });
  const wrong = await withoutBody("/v1/images/generations", { authorization: "Bearer sk-sy-not-a-key" }, 64 * MiB);
  expect(wrong.status).toBe(401);
});

describe("the public endpoints", () => {
  test("an address over PUBLIC_RATE_LIMIT gets its 429 before its body is read", async () => {
    await clearOfWindowEdge(60, 3_000); // the requests of one address below in one window
    const from = { "x-forwarded-for": "203.0.113.41" };
    const ask = JSON.stringify({ model: "kling-3.0/video", duration: 5 });
    for (let i = 0; i < 2; i++)
      expect(
        (
          await fetch(gw.url + "/v1/credits/estimate", {
            method: "POST",
            headers: { "content-type": "application/json", ...from },
            body: ask,
          })
        ).status,
      ).toBe(200);
    const r = await withoutBody("/v1/credits/estimate", from);
    expect(r.status).toBe(429);
    expect(r.answeredAfter).toBeLessThan(2000);
    expect(Number(/retry-after: (\d+)/i.exec(r.head)?.[1])).toBeGreaterThan(0);
    expect(json(r.body).error.code).toBe("rate_limit_exceeded");
    // malformed JSON is refused by the limit too, not parsed first
    const bad = await fetch(gw.url + "/v1/credits/estimate", {
      method: "POST",
      headers: { "content-type": "application/json", ...from },
      body: "{not json",
    });
    expect(bad.status).toBe(429);
    const notice = await fetch(gw.url + "/v1/media/upstream-events/kie", {
      method: "POST",
      headers: { "content-type": "application/json", ...from },
      body: "{}",
    });
    expect(notice.status).toBe(200); // its own window
  }, 15_000);

  test("bodies up to 1 MiB: a larger one gets 413 at once", async () => {
    for (const path of ["/v1/credits/estimate", "/v1/media/upstream-events/kie"]) {
      const r = await withoutBody(path, { "x-forwarded-for": "203.0.113.42" }, 2 * MiB);
      expect(r.status).toBe(413);
      expect(json(r.body).error.code).toBe("request_too_large");
    }
  });
});

describe("the dashboard", () => {
  test("a form post without a session, or from another site, is refused before its body is read", async () => {
    const { email } = await dashboardUser(gw);
    const s = await signIn(gw, email);
    for (const path of ["/dashboard/settings/api-keys", "/dashboard/settings/webhooks/key"]) {
      const signedOut = await withoutBody(path, { "content-type": "application/x-www-form-urlencoded" });
      expect(signedOut.status).toBe(401);
      expect(signedOut.answeredAfter).toBeLessThan(2000);
      expect(signedOut.body).toContain("Your session has ended");
      const crossSite = await withoutBody(path, {
        "content-type": "application/x-www-form-urlencoded",
        cookie: s.cookie,
        origin: "https://evil.example",
      });
      expect(crossSite.status).toBe(403);
      expect(crossSite.answeredAfter).toBeLessThan(2000);
    }
    const logout = await withoutBody("/dashboard/logout", { "content-type": "application/x-www-form-urlencoded" });
    expect(logout.status).toBe(303); // nothing to sign out of: sent to the sign-in page, as before
    expect(logout.answeredAfter).toBeLessThan(2000);
  });

  test("with a session, form bodies up to 1 MiB: a larger one gets the 413 page", async () => {
    const { email } = await dashboardUser(gw);
    const s = await signIn(gw, email);
    const r = await fetch(gw.url + "/dashboard/settings/api-keys", {
      method: "POST",
      headers: { cookie: s.cookie },
      body: new URLSearchParams({ _csrf: s.csrf, name: "x".repeat(MiB) }),
    });
    expect(r.status).toBe(413);
    expect(r.headers.get("content-type")).toStartWith("text/html");
  });

  test("sign-in: an address over LOGIN_ADDRESS_RATE_LIMIT gets its 429 before its body is read; bodies up to 1 MiB", async () => {
    await clearOfWindowEdge(60, 3_000); // the attempts below in one window
    const from = { "x-forwarded-for": "2001:db8:9:9::1", "content-type": "application/x-www-form-urlencoded" };
    for (let i = 0; i < 2; i++)
      expect(
        (
          await fetch(gw.url + "/dashboard/login", {
            method: "POST",
            headers: from,
            body: new URLSearchParams({ email: `g${i}@example.com`, password: "guess" }),
          })
        ).status,
      ).toBe(401);
    const r = await withoutBody("/dashboard/login", from);
    expect(r.status).toBe(429);
    expect(r.answeredAfter).toBeLessThan(2000);
    expect(r.body).toContain("Too many sign-in attempts");
    const crossSite = await withoutBody("/dashboard/login", {
      ...from,
      "x-forwarded-for": "203.0.113.43",
      origin: "https://evil.example",
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.answeredAfter).toBeLessThan(2000);
    const big = await withoutBody("/dashboard/login", { ...from, "x-forwarded-for": "203.0.113.44" }, 2 * MiB);
    expect(big.status).toBe(413);
  }, 15_000);
});
