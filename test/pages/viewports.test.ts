import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import {
  chromiumPresent,
  LAUNCH_TIMEOUT_MS,
  pageWidths,
  signedInContext,
  useChromium,
  type InPage,
  type InPageElement,
} from "../support/chromium";

// Every page a person reads, in Chromium on a laptop (1280×800) and a phone (390×844): no page is wider than the
// screen (a wide table scrolls inside its own box instead), and no navigation separator starts a wrapped row.
// Full-page screenshots go to test-results/screenshots/viewports/ (gitignored) for a human look.

const chromium = useChromium("viewport browser test", "viewports");
const VIEWPORTS = [
  { name: "laptop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
];
const PUBLIC = [
  "/",
  "/pricing",
  "/models/claude-sonnet-4-5",
  "/models/google/nano-banana",
  "/docs",
  "/dashboard/login",
];
const DASHBOARD = [
  "/dashboard",
  "/dashboard/usage",
  "/dashboard/tasks",
  "/dashboard/settings/api-keys",
  "/dashboard/settings/webhooks",
];

let gw: TestGateway;
let upstream: ReturnType<typeof startFakeLlmUpstream> | undefined;
let token: string;
beforeAll(async () => {
  if (!chromiumPresent) return;
  upstream = startFakeLlmUpstream();
  gw = await startGateway(providerEnv(upstream.url));
  const { email, key } = await dashboardUser(gw, 250);
  // A call, so the Usage page has its charts and tables filled (and its widest rows to fit).
  const call = await fetch(gw.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-5.2", messages: [{ role: "user", content: "hi" }], max_completion_tokens: 50 }),
  });
  expect(call.status).toBe(200);
  ({ token } = await signIn(gw, email));
}, LAUNCH_TIMEOUT_MS);
afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
});

const fileName = (path: string) => (path === "/" ? "home" : path.slice(1).replaceAll("/", "_"));

describe.skipIf(!chromiumPresent)("pages fit the screen", () => {
  for (const vp of VIEWPORTS)
    test(`${vp.width}×${vp.height}: the public pages, a model card, /docs and every dashboard page have no horizontal overflow`, async () => {
      const ctx = await signedInContext(chromium.browser, gw.url, token, vp);
      const page = await ctx.newPage();
      const wide: string[] = [];
      for (const path of [...PUBLIC, ...DASHBOARD]) {
        const r = await page.goto(gw.url + path);
        expect(r?.status()).toBe(200);
        expect(new URL(page.url()).pathname).toBe(path); // signed in: the dashboard did not send us to sign-in
        const { scrollWidth, innerWidth } = await pageWidths(page);
        if (scrollWidth > innerWidth) wide.push(`${path}: ${scrollWidth} > ${innerWidth}`);
        // The dashboard's separator before Pricing draws a line only between links: never at the start of a row.
        const strayLine = await page.$$eval("header.top .sep", (els: InPageElement[]) =>
          els.some(
            (e) =>
              e.previousElementSibling &&
              e.offsetTop !== e.previousElementSibling.offsetTop &&
              (globalThis as unknown as InPage).getComputedStyle(e).borderLeftWidth !== "0px",
          ),
        );
        if (strayLine) wide.push(`${path}: the navigation's separator starts a row`);
        // Chart labels stay readable: at least 8 px tall on any screen (an SVG scaled down to a phone shrinks its text).
        const tiny = await page.$$eval(
          "figure svg text",
          (els: InPageElement[]) => els.filter((e) => e.getBoundingClientRect().height < 8).length,
        );
        if (tiny) wide.push(`${path}: ${tiny} chart labels smaller than 8 px`);
        // A chart wider than a phone scrolls inside its card, opening on its latest days (where the bars are here) beside its value axis.
        const hidden = await page.$$eval(
          "figure svg rect, figure svg text.axis",
          (els: InPageElement[]) =>
            els.filter((e) => {
              const r = e.getBoundingClientRect();
              return r.left < 0 || r.right > (globalThis as unknown as InPage).innerWidth;
            }).length,
        );
        if (hidden) wide.push(`${path}: ${hidden} chart bars or axis labels off the screen`);
        // On a laptop the price tables fit whole: no scrolling inside their boxes either.
        if (path === "/pricing" && vp.width >= 1280) {
          const boxes = await page.$$eval("#results .scroll", (els: InPageElement[]) =>
            els
              .filter((e) => e.scrollWidth > e.clientWidth)
              .map((e) => e.querySelector("table")?.previousElementSibling?.textContent ?? "?"),
          );
          for (const b of boxes) wide.push(`/pricing table after "${b}" scrolls inside its box`);
        }
        await page.screenshot({ path: join(chromium.shots, `${vp.name}-${fileName(path)}.png`), fullPage: true });
      }
      expect(wide).toEqual([]);
      await ctx.close();
    }, 120_000);
});
