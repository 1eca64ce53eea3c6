// The Tasks page as a person sees it, in Chromium on a laptop and a phone: a task the media engine really finished
// (against the fake kie upstream, its result file stored by the gateway) shows a link to its result and a preview
// the browser actually loaded from the gateway, and the page fits the screen. Screenshots go to
// test-results/screenshots/tasks/ (gitignored).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { Users } from "../../src/dashboard/users";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { PASSWORD, signIn } from "../support/dashboard";
import { CHROMIUM, chromiumPresent, launchChromium, LAUNCH_TIMEOUT_MS } from "../support/chromium";

if (!chromiumPresent) console.warn(`SKIPPED: Tasks page browser test (no Chromium at ${CHROMIUM})`);
const SHOTS = join(import.meta.dir, "../../test-results/screenshots/tasks");

let gw: MediaGateway;
let browser: Browser;
let token: string;
let taskId: string;
beforeAll(async () => {
  if (!chromiumPresent) return;
  gw = await startMediaGateway();
  const { accountId, key } = await gw.account(1_000);
  await new Users(gw.ctx.db).create(accountId, "tasks-browser@example.com", PASSWORD);
  ({ token } = await signIn(gw, "tasks-browser@example.com"));
  const c = client(gw, key);
  const r = await c.createTask("google/nano-banana", { prompt: "a fox in snow" });
  expect(r.status).toBe(200);
  taskId = r.json.data.taskId;
  expect((await c.waitRecord(taskId)).state).toBe("success");
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
}, LAUNCH_TIMEOUT_MS);
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

describe.skipIf(!chromiumPresent)("Tasks page in Chromium", () => {
  for (const vp of [
    { name: "laptop", width: 1280, height: 800 },
    { name: "phone", width: 390, height: 844 },
  ])
    test(`${vp.width}×${vp.height}: a finished task shows its result link and a loaded preview; the page fits`, async () => {
      const ctx = await browser.newContext({ viewport: { width: vp.width, height: vp.height } });
      await ctx.addCookies([{ name: "sy_session", value: token, url: gw.url }]);
      const page = await ctx.newPage();
      expect((await page.goto(gw.url + "/dashboard/tasks"))?.status()).toBe(200);
      const row = page.locator("tr", { hasText: taskId });
      const links = await row.locator('a[href*="/files/"]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
      expect(links.length).toBeGreaterThan(0);
      expect((await fetch(links[0]!)).status).toBe(200); // the link serves the stored file
      const img = row.locator("img").first();
      await img.scrollIntoViewIfNeeded();
      await page.waitForFunction((el) => (el as HTMLImageElement).complete, await img.elementHandle());
      expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
      expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
      await page.screenshot({ path: join(SHOTS, `${vp.name}-tasks.png`), fullPage: true });
      await ctx.close();
    });
});
