import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";
import { attrs } from "../pages/html";

// Every dashboard page links to Pricing and Docs, and every page (dashboard and public) carries a favicon that
// needs no request of its own.

let gw: TestGateway;
let cookie: string;
beforeAll(async () => {
  gw = await startGateway();
  const { email } = await dashboardUser(gw);
  ({ cookie } = await signIn(gw, email));
});
afterAll(() => gw.stop());

const DASHBOARD = [
  "/dashboard",
  "/dashboard/usage",
  "/dashboard/tasks",
  "/dashboard/settings/api-keys",
  "/dashboard/settings/webhooks",
];

describe("dashboard navigation", () => {
  for (const path of DASHBOARD)
    test(`${path} links to Pricing and Docs, and has an inline favicon`, async () => {
      const r = await fetch(gw.url + path, { headers: { cookie } });
      expect(r.status).toBe(200);
      const page = await r.text();
      const nav = await attrs(page, "header.top nav a", "href");
      expect(nav).toEqual(
        expect.arrayContaining(["/dashboard", "/dashboard/usage", "/dashboard/tasks", "/pricing", "/docs"]),
      );
      const [icon] = await attrs(page, 'link[rel="icon"]', "href");
      expect(icon).toStartWith("data:image/svg+xml,");
      expect(decodeURIComponent(icon!.slice("data:image/svg+xml,".length))).toStartWith("<svg");
    });

  test("the public pages and the sign-in page have the favicon too", async () => {
    for (const path of ["/", "/pricing", "/docs", "/models/claude-sonnet-4-5", "/dashboard/login"]) {
      const [icon] = await attrs(await (await fetch(gw.url + path)).text(), 'link[rel="icon"]', "href");
      expect(icon).toStartWith("data:image/svg+xml,");
    }
  });
});
