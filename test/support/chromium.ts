// Debian's Chromium, driven by playwright-core (no browser download), for the browser tests.
// The first launch after Chromium is installed builds its font and profile caches, which took most of a 30 s test
// timeout in a fresh CI run; `launchChromium` renders a warm-up page inside beforeAll (with its own long timeout),
// so the tests' own steps are timed on a warm browser.

import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumPresent = existsSync(CHROMIUM);
/** Long enough for a first launch on a cold machine. */
export const LAUNCH_TIMEOUT_MS = 120_000;

const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** A browser (Playwright gives each launch a fresh temporary profile), already past its first render. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const warm = await browser.newPage();
  await warm.setContent("<p>warm-up: fonts, layout, a screenshot</p>");
  await warm.screenshot({ timeout: LAUNCH_TIMEOUT_MS });
  await warm.close();
  return browser;
}
