// An error thrown before a dashboard handler can answer (a body over MAX_REQUEST_BODY_MB, a NUL character, an
// unknown page) is an HTML page a browser can show, with the page's security headers, not the API's JSON.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";

let gw: TestGateway;
let cookie: string;
beforeAll(async () => {
  gw = await startGateway({ MAX_REQUEST_BODY_MB: "1" });
  const { email } = await dashboardUser(gw);
  ({ cookie } = await signIn(gw, email));
});
afterAll(() => gw.stop());

async function expectPage(r: Response, status: number, says: string) {
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toContain("text/html");
  expect(r.headers.get("content-security-policy")).toBeTruthy();
  expect(r.headers.get("x-request-id")).toStartWith("req_");
  const html = await r.text();
  expect(html).toContain("<html");
  expect(html).toContain(says);
}

test("a sign-in form over the body limit: a 413 page", async () => {
  const r = await fetch(gw.url + "/dashboard/login", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: gw.url },
    body: "email=a%40b.c&password=" + "x".repeat(2 * 1024 * 1024),
    redirect: "manual",
  });
  await expectPage(r, 413, "larger than the 1 MiB");
});

test("a NUL character in a dashboard URL: a 400 page", async () => {
  await expectPage(
    await fetch(gw.url + "/dashboard/usage?request_id=%00", { headers: { cookie } }),
    400,
    "NUL character",
  );
});

test("the API keeps its JSON errors", async () => {
  const r = await fetch(gw.url + "/v1/usage?request_id=%00");
  expect(r.status).toBe(400);
  expect(r.headers.get("content-type")).toContain("application/json");
});
