import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { sha256Hex } from "../../src/db/ids";
import { startGateway, type TestGateway } from "../support/gateway";
import { clearOfWindowEdge } from "../support/rate-windows";
import { dashboardUser, PASSWORD, signIn } from "../support/dashboard";
import { errorOf } from "../support/json";

// The dashboard's doors: sign-in (wrong password, rate limit), the session cookie (flags, forged, stored hashed),
// and form posts (cross-site Origin, missing or wrong CSRF token), plus the operator's way to create users.

let gw: TestGateway;
beforeAll(async () => {
  // This file signs in from one address many times; the per-address limit has tests of its own (sign-in-limits).
  gw = await startGateway({ LOGIN_RATE_LIMIT: "3/60s", LOGIN_ADDRESS_RATE_LIMIT: "1000/60s" });
});
afterAll(() => gw.stop());

const form = (fields: Record<string, string>) => new URLSearchParams(fields);

describe("sign-in", () => {
  test("a wrong password or unknown email is refused with 401 and no cookie", async () => {
    const { email } = await dashboardUser(gw);
    for (const [e, p] of [
      [email, PASSWORD + "x"],
      ["nobody@example.com", PASSWORD],
      [email, ""],
    ]) {
      const r = await fetch(gw.url + "/dashboard/login", {
        method: "POST",
        body: form({ email: e!, password: p! }),
        redirect: "manual",
      });
      expect(r.status).toBe(401);
      expect(r.headers.get("set-cookie")).toBeNull();
      expect(await r.text()).toContain("Wrong email or password.");
    }
  });

  test("the right password gives an httpOnly SameSite=Lax cookie; only its hash is stored", async () => {
    const { email } = await dashboardUser(gw);
    const r = await fetch(gw.url + "/dashboard/login", {
      method: "POST",
      body: form({ email: email.toUpperCase(), password: PASSWORD }),
      redirect: "manual",
    });
    expect(r.status).toBe(303);
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^sy_session=[\w-]{40,};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).not.toContain("Secure"); // PUBLIC_BASE_URL is http here
    const token = /sy_session=([^;]+)/.exec(cookie)![1]!;
    const rows = await gw.ctx.db.all<any>(sql`select id from sessions`);
    expect(rows.some((s) => s.id === token)).toBe(false);
    expect(rows.some((s) => s.id === sha256Hex(token))).toBe(true);
  });

  test("attempts are rate-limited per email and address: 429 page with retry-after", async () => {
    const { email } = await dashboardUser(gw);
    await clearOfWindowEdge(60, 3_000); // the five attempts in one window of LOGIN_RATE_LIMIT (3/60s)
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(gw.url + "/dashboard/login", {
        method: "POST",
        body: form({ email, password: "wrong-password-" + i }),
        redirect: "manual",
      });
      statuses.push(r.status);
      if (r.status === 429) expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    // even the right password waits out the window
    expect(
      (
        await fetch(gw.url + "/dashboard/login", {
          method: "POST",
          body: form({ email, password: PASSWORD }),
          redirect: "manual",
        })
      ).status,
    ).toBe(429);
  });

  test("a cross-site login post is refused", async () => {
    const { email } = await dashboardUser(gw);
    const r = await fetch(gw.url + "/dashboard/login", {
      method: "POST",
      headers: { origin: "https://evil.example" },
      body: form({ email, password: PASSWORD }),
      redirect: "manual",
    });
    expect(r.status).toBe(403);
    expect(r.headers.get("set-cookie")).toBeNull();
  });

  test("Secure is added when PUBLIC_BASE_URL is https", async () => {
    const g = await startGateway({ PUBLIC_BASE_URL: "https://gw.example.com" });
    try {
      const { email } = await dashboardUser(g);
      const r = await fetch(g.url + "/dashboard/login", {
        method: "POST",
        body: form({ email, password: PASSWORD }),
        redirect: "manual",
      });
      expect(r.headers.get("set-cookie")).toContain("; Secure");
    } finally {
      await g.stop();
    }
  });
});

describe("sessions", () => {
  test("a forged, expired or signed-out session cookie does not open pages", async () => {
    const { email } = await dashboardUser(gw);
    const s = await signIn(gw, email);
    expect((await fetch(gw.url + "/dashboard", { headers: { cookie: s.cookie }, redirect: "manual" })).status).toBe(
      200,
    );
    for (const cookie of ["sy_session=" + "A".repeat(43), "sy_session=" + sha256Hex(s.token), "sy_session=", ""]) {
      const r = await fetch(gw.url + "/dashboard/usage", { headers: { cookie }, redirect: "manual" });
      expect(r.status).toBe(303);
      expect(r.headers.get("location")).toStartWith("/dashboard/login");
    }
    // a forged cookie cannot post either, even with a CSRF token from a real page
    const post = await fetch(gw.url + "/dashboard/settings/api-keys", {
      method: "POST",
      headers: { cookie: "sy_session=forged" },
      body: form({ _csrf: s.csrf, name: "x" }),
    });
    expect(post.status).toBe(401);
    // expired
    await gw.ctx.db.run(sql`update sessions set expires_at = ${Date.now() - 1} where id = ${sha256Hex(s.token)}`);
    expect((await fetch(gw.url + "/dashboard", { headers: { cookie: s.cookie }, redirect: "manual" })).status).toBe(
      303,
    );
    // signed out
    const s2 = await signIn(gw, email);
    const out = await fetch(gw.url + "/dashboard/logout", {
      method: "POST",
      headers: { cookie: s2.cookie },
      body: form({ _csrf: s2.csrf }),
      redirect: "manual",
    });
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await fetch(gw.url + "/dashboard", { headers: { cookie: s2.cookie }, redirect: "manual" })).status).toBe(
      303,
    );
  });

  test("pages are not cacheable or frameable", async () => {
    const { email } = await dashboardUser(gw);
    const s = await signIn(gw, email);
    const r = await fetch(gw.url + "/dashboard/settings/api-keys", { headers: { cookie: s.cookie } });
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });
});

describe("form posts (CSRF)", () => {
  test("refused from another origin, without the token, or with another session's token; accepted same-origin", async () => {
    const { email, accountId } = await dashboardUser(gw);
    const s = await signIn(gw, email);
    const other = await signIn(gw, (await dashboardUser(gw)).email);
    const attempt = (headers: Record<string, string>, fields: Record<string, string>) =>
      fetch(gw.url + "/dashboard/settings/api-keys", {
        method: "POST",
        headers: { cookie: s.cookie, ...headers },
        body: form({ name: "csrf-test", ...fields }),
      });
    expect((await attempt({ origin: "https://evil.example" }, { _csrf: s.csrf })).status).toBe(403);
    expect((await attempt({ origin: "null" }, { _csrf: s.csrf })).status).toBe(403);
    expect((await attempt({ "sec-fetch-site": "cross-site" }, { _csrf: s.csrf })).status).toBe(403);
    expect((await attempt({ origin: gw.url }, {})).status).toBe(403);
    expect((await attempt({ origin: gw.url }, { _csrf: other.csrf })).status).toBe(403);
    expect((await gw.ctx.accounts.listKeys(accountId)).filter((k) => k.name === "csrf-test")).toEqual([]);
    const ok = await attempt({ origin: gw.url }, { _csrf: s.csrf });
    expect(ok.status).toBe(200);
    expect((await gw.ctx.accounts.listKeys(accountId)).filter((k) => k.name === "csrf-test")).toHaveLength(1);
  });

  test("a key of another account cannot be revoked from this session", async () => {
    const mine = await dashboardUser(gw);
    const theirs = await gw.account(1);
    const s = await signIn(gw, mine.email);
    const r = await fetch(gw.url + `/dashboard/settings/api-keys/${theirs.keyId}/revoke`, {
      method: "POST",
      headers: { cookie: s.cookie, origin: gw.url },
      body: form({ _csrf: s.csrf }),
      redirect: "manual",
    });
    expect(r.status).toBe(404);
    expect((await gw.ctx.accounts.listKeys(theirs.accountId))[0]!.revoked_at).toBeNull();
  });
});

describe("users are created by the operator", () => {
  test("POST /admin/v1/accounts/{id}/users needs the admin token, validates, and refuses duplicates", async () => {
    const { accountId } = await gw.account(1);
    const body = JSON.stringify({ email: "Ops@Example.com", password: "long-enough-password" });
    const noToken = await fetch(gw.url + `/admin/v1/accounts/${accountId}/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(noToken.status).toBe(401);
    // checked before the body: a caller without the token learns nothing of the fields the route wants
    const emptyNoToken = await fetch(gw.url + `/admin/v1/accounts/${accountId}/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(emptyNoToken.status).toBe(401);
    expect((await errorOf(emptyNoToken)).error.code).toBe("invalid_admin_token");
    const r = await gw.admin(`/admin/v1/accounts/${accountId}/users`, { method: "POST", body });
    expect(r.status).toBe(201);
    const user: any = await r.json();
    expect(user).toMatchObject({ account_id: accountId, email: "ops@example.com" });
    expect(user.password_hash).toBeUndefined();
    const stored = await gw.ctx.db.get<any>(sql`select password_hash from users where id = ${user.id}`);
    expect(stored.password_hash).toStartWith("$argon2id$");
    expect((await gw.admin(`/admin/v1/accounts/${accountId}/users`, { method: "POST", body })).status).toBe(409);
    expect(
      (
        await gw.admin(`/admin/v1/accounts/${accountId}/users`, {
          method: "POST",
          body: JSON.stringify({ email: "a@b.co", password: "short" }),
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await gw.admin(`/admin/v1/accounts/acct_nope/users`, {
          method: "POST",
          body: JSON.stringify({ email: "x@b.co", password: "long-enough-password" }),
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await fetch(gw.url + "/dashboard/login", {
          method: "POST",
          body: form({ email: "ops@example.com", password: "long-enough-password" }),
          redirect: "manual",
        })
      ).status,
    ).toBe(303);
  });
});
