// Each route declares its guard (http/guards.ts: `{ apiKey: true }`, `{ admin: true }`; dashboard/guard.ts:
// `{ session: true }`). Walked over every route the app serves, so a route added without one is caught here.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.stop());

const routes = () =>
  gw.app.routes
    .filter((r) => r.method !== "HEAD" && r.method !== "OPTIONS")
    .map((r) => ({ method: r.method, path: r.path.replace(/:[^/]+/g, "x").replace(/\*$/, "x") }));
const send = (method: string, path: string) =>
  fetch(gw.url + path, {
    method,
    redirect: "manual",
    ...(method === "GET" ? {} : { headers: { "content-type": "application/json" }, body: "{}" }),
  });

test("every admin route refuses a caller without the admin token", async () => {
  const admin = routes().filter((r) => r.path.startsWith("/admin/"));
  expect(admin.length).toBeGreaterThan(10);
  for (const { method, path } of admin) {
    const r = await send(method, path);
    expect([method, path, r.status, ((await r.json()) as any).error.code]).toEqual([
      method,
      path,
      401,
      "invalid_admin_token",
    ]);
  }
});

test("every /v1 route but the public ones refuses a caller without a key", async () => {
  const PUBLIC = [/^\/v1\/models\b/, /^\/v1\/credits\/estimate$/, /^\/v1\/media\/upstream-events\//];
  const keyed = routes().filter(
    (r) => (r.path.startsWith("/v1/") || r.path.startsWith("/api/v1/")) && !PUBLIC.some((p) => p.test(r.path)),
  );
  for (const must of ["/api/v1/jobs/createTask", "/v1/tasks/x", "/v1/key", "/v1/credits", "/v1/messages"])
    expect(keyed.map((r) => r.path)).toContain(must);
  for (const { method, path } of keyed)
    expect([method, path, (await send(method, path)).status]).toEqual([method, path, 401]);
});

test("every dashboard page but sign-in sends a browser without a session to sign in; every form post is refused", async () => {
  const pages = routes().filter((r) => r.path.startsWith("/dashboard") && r.path !== "/dashboard/login");
  expect(pages.length).toBeGreaterThan(8);
  for (const { method, path } of pages) {
    const r = await send(method, path);
    if (method === "GET")
      expect([path, r.status, r.headers.get("location")?.startsWith("/dashboard/login")]).toEqual([path, 303, true]);
    else if (path === "/dashboard/logout")
      expect([path, r.status]).toEqual([path, 303]); // signed out already: back to sign-in
    else expect([path, r.status]).toEqual([path, 401]);
  }
});
