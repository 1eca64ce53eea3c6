import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import OpenAI from "openai";
import type { Page } from "playwright-core";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, PASSWORD } from "../support/dashboard";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { chromiumPresent, LAUNCH_TIMEOUT_MS, useChromium } from "../support/chromium";

// The dashboard in a real browser (Debian's Chromium driven by playwright-core): sign in, create a key on
// Settings → API Keys, use it with the openai SDK against the running gateway, find the request on the Usage page,
// revoke the key and see the SDK refused. Screenshots of every page go to test-results/screenshots/.
// The completion goes to the fake upstream (test/fakes/llm-upstream.ts), as OpenAI would answer it.

const chromium = useChromium("dashboard browser test");

let gw: TestGateway;
let page: Page;
let upstream: ReturnType<typeof startFakeLlmUpstream> | undefined;

beforeAll(async () => {
  if (!chromiumPresent) return;
  upstream = startFakeLlmUpstream();
  // Defaults above the key's own limits below: a customer may only make a key stricter than the default.
  gw = await startGateway({
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    OPENAI_API_KEY: "sk-upstream-test",
    DEFAULT_RATE_LIMIT: "100/10s",
    DEFAULT_MAX_CONCURRENT_TASKS: "5",
  });
  page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
}, LAUNCH_TIMEOUT_MS);

afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
});

const shot = (name: string, fullPage = true) =>
  page.screenshot({ path: join(chromium.shots, `${name}.png`), fullPage });

describe.skipIf(!chromiumPresent)("dashboard in Chromium", () => {
  test("sign in, create a key, use it with the openai SDK, see it on Usage, revoke it and see it refused", async () => {
    const { email } = await dashboardUser(gw, 500);

    await signIn(email);

    const key = await createKey("browser test");

    // Use the key with the openai SDK against the running gateway.
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user", content: "Say hi" }] })
      .withResponse();
    expect(data.choices.length).toBeGreaterThan(0);
    const requestId = response.headers.get("x-request-id")!;

    // Usage page: the request is in the log, and the charts have data.
    await page.goto(gw.url + "/dashboard/usage?request_id=" + requestId);
    expect(await page.textContent("#request-log")).toContain(requestId);
    expect(await page.locator("figure").count()).toBe(2); // spend and tokens charts
    expect(await page.locator("svg[role=img]").count()).toBe(2);
    await shot("03-usage");

    await visitTheOtherPages();

    // Revoke on the page; the SDK is refused.
    await page.goto(gw.url + "/dashboard/settings/api-keys");
    await page.locator("tr", { hasText: "browser test" }).locator('button:has-text("Revoke")').click();
    await page.waitForURL("**/dashboard/settings/api-keys");
    expect(await page.locator("tr", { hasText: "browser test" }).textContent()).toContain("revoked");
    await shot("08-api-keys-revoked");
    const refused = client.chat.completions.create({
      model: "gpt-5.2",
      max_completion_tokens: 100,
      messages: [{ role: "user", content: "again" }],
    });
    // (the SDK's APIPromise is a lazy thenable, so it is awaited explicitly rather than through expect().rejects)
    const error = await refused.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
  }, 60_000);
});

/** Signs in on the dashboard, after a wrong password first: the page says so and stays on sign-in. */
async function signIn(email: string) {
  await page.goto(gw.url + "/dashboard/settings/api-keys");
  expect(new URL(page.url()).pathname).toBe("/dashboard/login");
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', "not the password");
  // Waiting on the answer itself, and no `expect(...).resolves`: should this step fail again (it timed out twice in
  // full runs on a loaded machine, never alone), Playwright's own error says what it waited for.
  const [wrongPassword] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/dashboard/login"),
    page.click('button[type="submit"]'),
  ]);
  expect(wrongPassword.status()).toBe(401);
  expect(await page.textContent('[role="alert"]')).toContain("Wrong email or password");
  await shot("01-sign-in");
  await page.fill('input[name="password"]', PASSWORD);
  await Promise.all([page.waitForURL("**/dashboard/settings/api-keys"), page.click('button[type="submit"]')]);
}

/** Creates a key named `name` with its own limits; it is shown once, with a copy button. Its secret. */
async function createKey(name: string): Promise<string> {
  await page.fill('input[name="name"]', name);
  await page.fill('input[name="requests"]', "50");
  await page.fill('input[name="window_seconds"]', "10");
  await page.fill('input[name="max_concurrent_tasks"]', "3");
  await page.click('form[action="/dashboard/settings/api-keys"] button[type="submit"]');
  const key = (await page.textContent("#new-key"))!.trim();
  expect(key).toStartWith("sk-sy-");
  expect(await page.isVisible('button[data-copy="new-key"]')).toBe(true);
  const row = page.locator("tr", { hasText: name });
  expect(await row.textContent()).toContain("50 / 10 s, 3 concurrent tasks");
  expect(await row.textContent()).not.toContain(key); // the list shows the prefix only
  await shot("02-api-keys-created");
  await page.reload(); // a reload re-submits nothing and shows no key
  expect(await page.locator("#new-key").count()).toBe(0);
  return key;
}

/** The wallet, tasks, webhooks and docs pages, each with its screenshot. */
async function visitTheOtherPages() {
  await page.goto(gw.url + "/dashboard");
  const available = (await page.textContent("#available"))!;
  expect(Number.parseFloat(available)).toBeLessThan(500); // the completion was charged
  await shot("04-wallet");
  await page.goto(gw.url + "/dashboard/tasks");
  await shot("05-tasks");
  await page.goto(gw.url + "/dashboard/settings/webhooks");
  await page.click('form[action="/dashboard/settings/webhooks/key"] button');
  expect((await page.textContent("#new-webhook-key"))!.trim()).toStartWith("whsec_");
  await shot("06-webhooks");
  await page.goto(gw.url + "/docs");
  await shot("07-docs", false);
}
