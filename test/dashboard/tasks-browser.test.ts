// The Tasks page as a person sees it, in Chromium on a laptop and a phone: a task the media engine really finished
// (against the fake kie upstream, its result file stored by the gateway) shows a link to its result and a preview
// the browser actually loaded from the gateway, and the page fits the screen. Screenshots go to
// test-results/screenshots/tasks/ (gitignored).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Users } from "../../src/dashboard/users";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { PASSWORD, signIn } from "../support/dashboard";
import {
  chromiumPresent,
  LAUNCH_TIMEOUT_MS,
  pageWidths,
  signedInContext,
  useChromium,
  type InPageAnchor,
  type InPageImage,
} from "../support/chromium";

const chromium = useChromium("Tasks page browser test", "tasks");

let gw: MediaGateway;
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
}, LAUNCH_TIMEOUT_MS);
afterAll(async () => {
  await gw?.stop();
});

describe.skipIf(!chromiumPresent)("Tasks page in Chromium", () => {
  for (const vp of [
    { name: "laptop", width: 1280, height: 800 },
    { name: "phone", width: 390, height: 844 },
  ])
    test(`${vp.width}×${vp.height}: a finished task shows its result link and a loaded preview; the page fits`, async () => {
      const ctx = await signedInContext(chromium.browser, gw.url, token, vp);
      const page = await ctx.newPage();
      expect((await page.goto(gw.url + "/dashboard/tasks"))?.status()).toBe(200);
      const row = page.locator("tr", { hasText: taskId });
      const links = await row
        .locator('a[href*="/files/"]')
        .evaluateAll((anchors: InPageAnchor[]) => anchors.map((a) => a.href));
      expect(links.length).toBeGreaterThan(0);
      expect((await fetch(links[0]!)).status).toBe(200); // the link serves the stored file
      const img = row.locator("img").first();
      await img.scrollIntoViewIfNeeded();
      await page.waitForFunction((el: InPageImage) => el.complete, await img.elementHandle());
      expect(await img.evaluate((el: InPageImage) => el.naturalWidth)).toBeGreaterThan(0);
      const { scrollWidth, innerWidth } = await pageWidths(page);
      expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
      await page.screenshot({ path: join(chromium.shots, `${vp.name}-tasks.png`), fullPage: true });
      await ctx.close();
    });
});
