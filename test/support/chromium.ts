// Debian's Chromium, driven by playwright-core (no browser download), for the browser tests: one launch per test
// file, a warm-up render inside beforeAll (the first launch on a fresh machine builds font and profile caches that
// took most of a 30 s test timeout), screenshots under test-results/screenshots/ (gitignored).

import { afterAll, beforeAll } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumPresent = existsSync(CHROMIUM);
/** Long enough for a first launch on a cold machine. */
export const LAUNCH_TIMEOUT_MS = 120_000;

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const SCREENSHOTS = join(import.meta.dir, "../../test-results/screenshots");

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

export interface ChromiumSession {
  /** The file's browser; only inside tests skipped with `describe.skipIf(!chromiumPresent)` (or test.skipIf). */
  readonly browser: Browser;
  /** Where this file's screenshots go (made at launch). */
  readonly shots: string;
}

/**
 * Chromium for the test file that calls this at its top: says `SKIPPED: <what>` where there is none, launches it in
 * a beforeAll (registered before the file's own), closes it after the file. `folder` is a subfolder of the
 * screenshots folder.
 */
export function useChromium(what: string, folder = ""): ChromiumSession {
  if (!chromiumPresent) console.warn(`SKIPPED: ${what} (no Chromium at ${CHROMIUM}; .ci/run installs it)`);
  const shots = join(SCREENSHOTS, folder);
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!chromiumPresent) return;
    browser = await launchChromium();
    mkdirSync(shots, { recursive: true });
  }, LAUNCH_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get browser() {
      if (!browser) throw new Error("Chromium is not running: the test should be skipped where it is absent");
      return browser;
    },
    shots,
  };
}

/** A browser context signed in to the dashboard with a session token (from `signIn`), at a viewport's size. */
export async function signedInContext(
  browser: Browser,
  gatewayUrl: string,
  token: string,
  viewport: { width: number; height: number },
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
  await context.addCookies([{ name: "sy_session", value: token, url: gatewayUrl }]);
  return context;
}

/**
 * What the page-side callbacks (page.evaluate, $$eval, waitForFunction: Playwright runs them in Chromium) read of
 * the browser. The test program is typed for Bun, and lib.dom would retype fetch, Response and Headers for src too,
 * so a callback reaches the page's globals as `globalThis as unknown as InPage` (types only: nothing is imported).
 */
export interface InPageElement {
  readonly offsetTop: number;
  readonly scrollWidth: number;
  readonly clientWidth: number;
  readonly textContent: string | null;
  readonly previousElementSibling: InPageElement | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { left: number; right: number; height: number };
  querySelector(selector: string): InPageElement | null;
}
export interface InPageAnchor extends InPageElement {
  readonly href: string;
}
export interface InPageImage extends InPageElement {
  readonly complete: boolean;
  readonly naturalWidth: number;
}
export interface InPage {
  readonly innerWidth: number;
  readonly location: { readonly search: string };
  readonly document: {
    readonly documentElement: { readonly scrollWidth: number };
    querySelectorAll(selector: string): ArrayLike<InPageElement>;
  };
  getComputedStyle(element: InPageElement): { readonly borderLeftWidth: string };
}

/** The page's full width and the window's: a page that fits the screen has `scrollWidth <= innerWidth`. */
export function pageWidths(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as InPage;
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth };
  });
}
