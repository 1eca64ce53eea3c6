import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../support/gateway";
import { llmEntries, mediaEntries } from "./catalog-data";
import { chromiumPresent, useChromium, type InPage, type InPageElement } from "../support/chromium";

// A real browser: the pricing page's filters (enhanced by its inline script) and a click through to a card.
// Screenshots go to test-results/screenshots/ (gitignored) for a human look.

const chromium = useChromium("pricing page browser test");
const available = chromiumPresent;

let gw: TestGateway;
beforeAll(async () => {
  if (!available) return;
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

test.skipIf(!available)(
  "filter the pricing page, then open a model card",
  async () => {
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e: Error) => errors.push(e.message));
    await page.goto(gw.url + "/pricing");
    const total = llmEntries.length + mediaEntries.length;
    expect(await page.locator("tbody.model").count()).toBe(total);
    await page.screenshot({ path: join(chromium.shots, "pricing-all.png"), fullPage: false });

    // Choosing a type swaps the results in place (script) and keeps the URL shareable.
    await page.selectOption('select[name="type"]', "llm");
    await page.waitForFunction(() => (globalThis as unknown as InPage).location.search === "?type=llm");
    await page.waitForFunction(() =>
      Array.from((globalThis as unknown as InPage).document.querySelectorAll("tbody.model")).every(
        (t) => t.getAttribute("data-type") === "llm",
      ),
    );
    // Typing narrows further without pressing Enter.
    await page.fill('input[name="q"]', "sonnet");
    await page.waitForFunction(() => (globalThis as unknown as InPage).location.search === "?type=llm&q=sonnet");
    await page.waitForFunction(
      () => (globalThis as unknown as InPage).document.querySelectorAll("tbody.model").length === 2,
    );
    const ids = await page
      .locator("tbody.model")
      .evaluateAll((els: InPageElement[]) => els.map((e) => e.getAttribute("data-model-id")).sort());
    expect(ids).toEqual(["claude-sonnet-4-5", "claude-sonnet-5"]); // claude-sonnet-4 is retired: not on sale
    expect(await page.locator("#count").textContent()).toBe(`Showing 2 of ${total} models.`);
    await page.screenshot({ path: join(chromium.shots, "pricing-filtered.png"), fullPage: true });

    await page.click('tbody[data-model-id="claude-sonnet-4-5"] a');
    await page.waitForURL(/\/models\/claude-sonnet-4-5$/);
    expect(await page.locator("h1").textContent()).toBe("Claude Sonnet 4.5");
    expect(await page.locator("p.worked strong").textContent()).toContain("= 10.5 credits");
    await page.screenshot({ path: join(chromium.shots, "card-claude-sonnet-4-5.png"), fullPage: true });

    // A media card, when the media catalog is present: the input table is on it.
    const media = mediaEntries.find((e) => e.type === "video") ?? mediaEntries[0];
    if (media) {
      await page.goto(gw.url + "/pricing?type=" + media.type);
      await page.click(`tbody[data-model-id="${media.id}"] a`);
      await page.waitForSelector("table.fields");
      expect(await page.locator("tr.field").count()).toBe(Object.keys(media.input.properties).length);
      await page.screenshot({
        path: join(chromium.shots, `card-${media.id.replaceAll("/", "_")}.png`),
        fullPage: true,
      });
    }
    expect(errors).toEqual([]);
    await page.close();
  },
  60_000,
);

test.skipIf(!available)(
  "without JavaScript the filter form still works",
  async () => {
    const ctx = await chromium.browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(gw.url + "/pricing");
    await page.selectOption('select[name="type"]', "embedding");
    await Promise.all([page.waitForURL(/type=embedding/), page.click('button[type="submit"]')]);
    const types = await page
      .locator("tbody.model")
      .evaluateAll((els: InPageElement[]) => els.map((e) => e.getAttribute("data-type")));
    expect(types.length).toBe(llmEntries.filter((e) => e.type === "embedding").length);
    expect(new Set(types)).toEqual(new Set(["embedding"]));
    await page.screenshot({ path: join(chromium.shots, "pricing-no-js.png") });
    await ctx.close();
  },
  60_000,
);
