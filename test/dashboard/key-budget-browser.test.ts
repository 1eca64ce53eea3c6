// In a real browser (Debian's Chromium via playwright-core): a customer edits a key's budget on Settings → API Keys,
// the gateway then refuses that key's call beyond the budget (402 key_budget_exceeded), and the Usage page shows the
// media spend and the per-key breakdown. Screenshots go to test-results/screenshots/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { Users } from "../../src/dashboard/users";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { chromiumPresent, LAUNCH_TIMEOUT_MS, useChromium } from "../support/chromium";
import { PASSWORD } from "../support/dashboard";

const chromium = useChromium("key budget browser test");

const fake = startFakeLlmUpstream();
let gw: MediaGateway;
let page: Page;
beforeAll(async () => {
  if (!chromiumPresent) return;
  gw = await startMediaGateway(providerEnv(fake.url));
  page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
}, LAUNCH_TIMEOUT_MS);
afterAll(async () => {
  await gw?.stop();
  await fake.stop();
});

describe.skipIf(!chromiumPresent)("a key's budget in Chromium", () => {
  test("edit the budget, see the key refused beyond it, see media and per-key spend on Usage", async () => {
    const { accountId, keyId, key } = await gw.account(1000);
    const email = `budget-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await new Users(gw.ctx.db).create(accountId, email, PASSWORD);

    await page.goto(gw.url + "/dashboard/settings/api-keys");
    await page.fill('input[name="email"]', email);
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL("**/dashboard/settings/api-keys"), page.click('button[type="submit"]')]);

    await Promise.all([
      page.waitForURL(`**/dashboard/settings/api-keys/${keyId}`),
      page.locator(`tr[data-key-id="${keyId}"] a:has-text("Edit")`).click(),
    ]);
    await page.fill('input[name="budget_day"]', "25");
    await page.fill('input[name="models"]', "gpt-5.2, google/*");
    await page.screenshot({ path: join(chromium.shots, "09-api-key-edit.png"), fullPage: true });
    await Promise.all([
      page.waitForURL("**/dashboard/settings/api-keys"),
      page.click('#edit-key button[type="submit"]'),
    ]);
    expect(await page.locator(`tr[data-key-id="${keyId}"]`).textContent()).toContain("25 credits per day");

    // The budget holds: a 20-credit image fits, a second does not (402 key_budget_exceeded).
    const c = client(gw, key);
    await c.waitRecord((await c.createTask("google/nano-banana", { prompt: "a fox" })).json.data.taskId);
    expect((await c.createTask("google/nano-banana", { prompt: "another fox" })).json).toMatchObject({
      code: 402,
      error_code: "key_budget_exceeded",
    });
    const chat = await fetch(gw.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(200);

    await page.goto(gw.url + "/dashboard/usage");
    expect(await page.locator("#by-model").textContent()).toContain("google/nano-banana");
    const row = (await page.locator(`#by-key tr[data-key-id="${keyId}"]`).textContent())!;
    expect(row).toContain("test (sk-sy-");
    expect(await page.locator(`#by-key tr[data-key-id="${keyId}"] td:nth-child(3)`).textContent()).toBe("1"); // one media task
    await page.screenshot({ path: join(chromium.shots, "10-usage-media-and-keys.png"), fullPage: true });
  }, 60_000);
});
