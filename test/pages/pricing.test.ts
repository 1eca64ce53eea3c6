import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../support/gateway";
import { creditsTextToMicros, expectedLlmRows, expectedMediaRows, llmEntries, mediaEntries } from "./catalog-data";
import { num, pricingModels, texts } from "./html";

let gw: TestGateway;
beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(gw.url + path, { headers });
const page = async (path: string) => {
  const r = await get(path);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/html");
  return r.text();
};
const allIds = () => [...llmEntries, ...mediaEntries].map((e) => e.id).sort();

describe("/pricing", () => {
  test("lists every model of the catalog, with no key, each linking to its card", async () => {
    const shown = await pricingModels(await page("/pricing"));
    expect(shown.map((m) => m.id).sort()).toEqual(allIds());
    for (const m of shown) expect(m.href).toBe("/models/" + m.id.split("/").map(encodeURIComponent).join("/"));
  });

  test("every LLM and embedding price shown equals the catalog's, in USD and credits per million tokens (web search per 1,000)", async () => {
    const shown = new Map((await pricingModels(await page("/pricing"))).map((m) => [m.id, m]));
    for (const e of llmEntries) {
      const m = shown.get(e.id)!;
      expect(m.type).toBe(e.type);
      expect(m.provider).toBe(e.provider);
      const expected = expectedLlmRows(e);
      expect(m.rows.map((r) => r.label)).toEqual(expected.map((x) => x.label));
      m.rows.forEach((r, i) => {
        expect(num(r.usd)).toBe(expected[i]!.usd);
        expect(creditsTextToMicros(r.credits)).toBe(expected[i]!.creditsMicros);
        expect(r.unit).toBe(expected[i]!.unit!);
      });
    }
  });

  test("every media price shown equals its rule's rows, in USD and credits, with the unit", async () => {
    if (!mediaEntries.length) return console.warn("SKIPPED: no media models in the catalog yet");
    const shown = new Map((await pricingModels(await page("/pricing"))).map((m) => [m.id, m]));
    for (const e of mediaEntries) {
      const m = shown.get(e.id)!;
      expect(m.type).toBe(e.type);
      const expected = await expectedMediaRows(e);
      expect(m.rows.map((r) => r.label)).toEqual(expected.map((x) => x.label));
      m.rows.forEach((r, i) => {
        expect(num(r.usd)).toBe(expected[i]!.usd);
        expect(creditsTextToMicros(r.credits)).toBe(expected[i]!.creditsMicros);
        expect(r.unit).toMatch(/^per /);
      });
    }
  });

  test("filters by type, provider and text on the server (GET form, no JavaScript needed)", async () => {
    const ids = async (q: string) => (await pricingModels(await page("/pricing?" + q))).map((m) => m.id).sort();
    const where = (f: (e: any) => boolean) =>
      [...llmEntries, ...mediaEntries]
        .filter(f)
        .map((e) => e.id)
        .sort();
    expect(await ids("type=embedding")).toEqual(where((e) => e.type === "embedding"));
    expect(await ids("provider=anthropic")).toEqual(where((e) => e.provider === "anthropic"));
    expect(await ids("type=llm&provider=openai&q=mini")).toEqual(["gpt-4o-mini", "gpt-5-mini"]);
    expect(await ids("q=codex")).toEqual([]); // gpt-5-codex and gpt-5.1-codex are retired: not on sale
    // Terms all have to match, in any case, in id, name or description.
    expect(await ids("q=CLAUDE%20haiku")).toEqual(["claude-haiku-4-5", "claude-haiku-5-5"]); // claude-3-5-haiku is retired: not on sale
    // Unknown values are dropped rather than refused.
    expect(await ids("type=hologram&provider=nobody")).toEqual(allIds());
    const none = await page("/pricing?q=zzzz-no-such-model");
    expect(await pricingModels(none)).toEqual([]);
    expect(none).toContain("No model matches");
    // The form keeps the chosen values so the filter can be refined.
    const form = await page("/pricing?type=llm&q=%3Cscript%3E");
    expect(form).toContain('<option value="llm" selected>');
    expect(form).toContain('value="&lt;script&gt;"');
    expect((await texts(form, "#count"))[0]).toMatch(/^Showing 0 of \d+ models\.$/);
    // ... as typed: the same search in another case (answered from the page cache) shows its own text
    expect(await page("/pricing?q=Haiku")).toContain('value="Haiku"');
    expect(await page("/pricing?q=HAIKU")).toContain('value="HAIKU"');
    if (mediaEntries.length) {
      expect(await ids("type=video")).toEqual(where((e) => e.type === "video"));
      expect(await ids("provider=fal&type=image")).toEqual(
        where((e) => e.type === "image" && e.routes[0].provider === "fal"),
      );
    }
  });

  test("ETag from the catalog fingerprint, 304 on If-None-Match, Cache-Control; each filter has its own tag", async () => {
    const r = await get("/pricing");
    const etag = r.headers.get("etag")!;
    expect(etag).toStartWith(`"${gw.ctx.catalog.version}-`);
    expect(r.headers.get("cache-control")).toContain("max-age=");
    const again = await get("/pricing", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("etag")).toBe(etag);
    expect((await get("/pricing", { "if-none-match": `"other", W/${etag}` })).status).toBe(304);
    expect((await get("/pricing", { "if-none-match": '"stale"' })).status).toBe(200);
    const filtered = await get("/pricing?type=llm");
    expect(filtered.headers.get("etag")).not.toBe(etag);
    expect((await get("/pricing?type=llm", { "if-none-match": etag })).status).toBe(200);
  });

  test("a changed catalog changes the ETag and the price shown", async () => {
    const file = join(tmpdir(), `pricing-catalog-${Date.now()}.json`);
    const sonnet = llmEntries.find((e) => e.id === "claude-sonnet-4-5");
    writeFileSync(file, JSON.stringify([{ ...sonnet, pricing: { ...sonnet.pricing, input: 3.3 } }]));
    const other = await startGateway({ CATALOG_PATH: file });
    try {
      const a = await get("/pricing");
      const b = await fetch(other.url + "/pricing");
      expect(b.headers.get("etag")).not.toBe(a.headers.get("etag"));
      const m = (await pricingModels(await b.text())).find((x) => x.id === "claude-sonnet-4-5")!;
      expect(m.rows[0]).toMatchObject({ label: "input", usd: "$3.30", credits: "3,300" });
    } finally {
      await other.stop();
    }
  });
});

describe("/llms.txt", () => {
  test("a Markdown index linking auth, OpenAPI, pricing, the model list and every model card", async () => {
    const r = await get("/llms.txt");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/markdown");
    const text = await r.text();
    expect(text).toStartWith("# Switchyard\n");
    const base = gw.ctx.config.publicBaseUrl;
    for (const p of ["/auth.md", "/openapi.json", "/pricing", "/v1/models"]) expect(text).toContain(`(${base}${p})`);
    for (const id of allIds())
      expect(text).toContain(`(${base}/models/${id.split("/").map(encodeURIComponent).join("/")})`);
    // An LLM's line names its native endpoint and the translated ones.
    expect(text).toContain(
      "`gemini-2.5-pro` on `/v1/chat/completions` (also `/v1/messages`, `/v1/responses`, translated)",
    );
    expect(text).toMatch(/`text-embedding-3-small` on `\/v1\/embeddings`\n/);
  });
});

describe("/pricing: media prices are the whole credits charged", () => {
  // Models whose catalog price is a fraction of a credit per image (32.5, 17.5): the page shows what one image costs
  // a customer, the same figure the estimate endpoint (and the charge) gives.
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ["seedream/4.5-text-to-image", "any", {}],
    ["ideogram/v3-text-to-image", "rendering_speed=TURBO", { rendering_speed: "TURBO" }],
  ];
  for (const [id, label, input] of cases)
    test(`${id} (${label}): the page's credits equal POST /v1/credits/estimate's, a whole number`, async () => {
      const shown = (await pricingModels(await page("/pricing?q=" + encodeURIComponent(id)))).find((m) => m.id === id)!;
      const row = shown.rows.find((r) => r.label === label)!;
      const est: any = await (
        await fetch(gw.url + "/v1/credits/estimate", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: id, input: { prompt: "a fox", ...input } }),
        })
      ).json();
      expect(Number.isInteger(est.estimated_credits)).toBe(true);
      expect(row.credits).toBe(String(est.estimated_credits));
    });

  test("no price per image, clip or request is shown as a fraction of a credit", async () => {
    const shown = await pricingModels(await page("/pricing"));
    const fractions = shown
      .filter((m) => !["llm", "embedding"].includes(m.type))
      .flatMap((m) =>
        m.rows
          .filter((r) => !/^per (second|megapixel|1,000 characters)/.test(r.unit) && r.credits.includes("."))
          .map((r) => `${m.id} ${r.label}: ${r.credits}`),
      );
    expect(fractions).toEqual([]);
  });

  test("one row per model: each model's <tbody> has a single row in the page's tables", async () => {
    const text = await page("/pricing");
    const bodies = [...text.matchAll(/<tbody class="model"[\s\S]*?<\/tbody>/g)].map((m) =>
      m[0].replace(/<table class="inner">[\s\S]*?<\/table>/g, ""),
    );
    expect(bodies.length).toBe(allIds().length);
    for (const b of bodies) expect(b.match(/<tr>/g)?.length).toBe(1);
  });
});
