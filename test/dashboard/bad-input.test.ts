import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";

// Input no browser form of ours sends — a cookie that does not decode, a field sent twice or as a file, limits
// beyond what the admin API allows — gets the page's usual answer (sign in again, or the form's own message with
// a 4xx), never a 500.

let gw: TestGateway;
let user: Awaited<ReturnType<typeof dashboardUser>>;
let session: Awaited<ReturnType<typeof signIn>>;
beforeAll(async () => {
  gw = await startGateway({ DEFAULT_RATE_LIMIT: "5/10s", DEFAULT_MAX_CONCURRENT_TASKS: "2" }); // the spec's defaults: key limits are judged against them
  user = await dashboardUser(gw);
  session = await signIn(gw, user.email);
});
afterAll(() => gw.stop());

const KEYS = "/dashboard/settings/api-keys";
const createKey = (body: URLSearchParams | FormData) =>
  fetch(gw.url + KEYS, {
    method: "POST",
    headers: { cookie: session.cookie, origin: gw.url },
    body,
    redirect: "manual",
  });
const keyNames = async () => (await gw.ctx.accounts.listKeys(user.accountId)).map((k) => k.name);

describe("a session cookie that does not decode", () => {
  test("counts as signed out: pages send the browser to sign in, posts get the signed-out page", async () => {
    for (const path of ["/dashboard", "/dashboard/usage", KEYS, "/dashboard/settings/webhooks"]) {
      const r = await fetch(gw.url + path, { headers: { cookie: "sy_session=%zz" }, redirect: "manual" });
      expect(r.status).toBe(303);
      expect(r.headers.get("location")).toStartWith("/dashboard/login");
    }
    const post = await fetch(gw.url + KEYS, {
      method: "POST",
      headers: { cookie: "sy_session=%zz", origin: gw.url },
      body: new URLSearchParams({ _csrf: session.csrf, name: "x" }),
    });
    expect(post.status).toBe(401);
    expect(await post.text()).toContain("Your session has ended");
  });

  test("a flash cookie that does not decode next to a good session: the page opens, showing no key", async () => {
    const r = await fetch(gw.url + KEYS, { headers: { cookie: `${session.cookie}; sy_new_key=%E0%A4%A` } });
    expect(r.status).toBe(200);
    expect(await r.text()).not.toContain('id="new-key"');
  });
});

describe("form fields sent twice or as a file", () => {
  test("a name sent twice is no name: 422 with the form's message, no key", async () => {
    const before = await keyNames();
    const r = await createKey(
      new URLSearchParams([
        ["_csrf", session.csrf],
        ["name", "a"],
        ["name", "b"],
      ]),
    );
    expect(r.status).toBe(422);
    expect(await r.text()).toContain("Give the key a name");
    expect(await keyNames()).toEqual(before);
  });

  test("a name sent as a file upload is no name: 422 with the form's message, no key", async () => {
    const before = await keyNames();
    const body = new FormData();
    body.append("_csrf", session.csrf);
    body.append("name", new Blob(["not a name"]), "name.txt");
    const r = await createKey(body);
    expect(r.status).toBe(422);
    expect(await r.text()).toContain("Give the key a name");
    expect(await keyNames()).toEqual(before);
  });

  test("a limit sent twice counts as not given: 422 asking for both parts of the rate limit", async () => {
    const before = await keyNames();
    const r = await createKey(
      new URLSearchParams([
        ["_csrf", session.csrf],
        ["name", "twice"],
        ["requests", "5"],
        ["requests", "6"],
        ["window_seconds", "10"],
      ]),
    );
    expect(r.status).toBe(422);
    expect(await r.text()).toContain("Give both the number of requests and the window in seconds");
    expect(await keyNames()).toEqual(before);
  });

  test("a CSRF token sent twice is no token: 403", async () => {
    const r = await createKey(
      new URLSearchParams([
        ["_csrf", session.csrf],
        ["_csrf", session.csrf],
        ["name", "x"],
      ]),
    );
    expect(r.status).toBe(403);
  });
});

describe("key limits have the admin API's bounds", () => {
  const fields = (limits: Record<string, string>) =>
    new URLSearchParams({ _csrf: session.csrf, name: "bounds", ...limits });

  test.each([
    [
      "requests above 1,000,000",
      { requests: "1000001", window_seconds: "60" },
      "Requests must be a whole number from 1 to 1,000,000.",
    ],
    [
      "a window above 86,400 s",
      { requests: "10", window_seconds: "86401" },
      "Seconds must be a whole number from 1 to 86,400.",
    ],
    [
      "concurrent tasks above 10,000",
      { max_concurrent_tasks: "10001" },
      "Concurrent media tasks must be a whole number from 1 to 10,000.",
    ],
    [
      "a number too large to be exact",
      { max_concurrent_tasks: "99999999999999999999" },
      "Concurrent media tasks must be a whole number from 1 to 10,000.",
    ],
    ["zero", { requests: "0", window_seconds: "60" }, "Requests must be a whole number from 1 to 1,000,000."],
  ])("%s: 422 with the form's message, no key", async (_what, limits, message) => {
    const before = await keyNames();
    const r = await createKey(fields(limits));
    expect(r.status).toBe(422);
    expect(await r.text()).toContain(message);
    expect(await keyNames()).toEqual(before);
  });

  // Defaults here: 5 requests per 10 s, 2 concurrent media tasks (the spec's; higher limits come from the operator).
  test.each([
    ["a larger burst", { requests: "6", window_seconds: "60" }],
    ["a higher average rate", { requests: "5", window_seconds: "9" }],
    ["the largest values", { requests: "1000000", window_seconds: "86400" }],
    ["more concurrent tasks", { max_concurrent_tasks: "3" }],
  ])("limits looser than the default (%s): 422 pointing to the operator, no key", async (_what, limits) => {
    const before = await keyNames();
    const r = await createKey(fields(limits));
    expect(r.status).toBe(422);
    expect(await r.text()).toContain(
      "may be stricter than the default (5 requests per 10 s, 2 concurrent media tasks), not looser",
    );
    expect(await keyNames()).toEqual(before);
  });

  test("stricter limits are accepted from the dashboard; the admin API grants the largest", async () => {
    const r = await createKey(fields({ requests: "2", window_seconds: "10", max_concurrent_tasks: "1" }));
    expect(r.status).toBe(303);
    const page = await (await fetch(gw.url + KEYS, { headers: { cookie: session.cookie } })).text();
    expect(page).toContain("2 / 10 s, 1 concurrent tasks");
    expect(await createKey(fields({ requests: "5", window_seconds: "10", max_concurrent_tasks: "2" }))).toHaveProperty(
      "status",
      303,
    );
    const api = await gw.admin(`/admin/v1/accounts/${user.accountId}/keys`, {
      method: "POST",
      body: JSON.stringify({
        name: "api",
        rate_limit: { requests: 1_000_000, window_seconds: 86_400 },
        max_concurrent_tasks: 10_000,
      }),
    });
    expect(api.status).toBe(201);
  });
});
