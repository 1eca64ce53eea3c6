// Lifecycle on the public pages: /pricing lists what is on sale, current models before legacy ones within each type;
// every card (retired ones too) and its JSON show the status, dates, successor, and where and when the prices were
// checked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import llmData from "../../src/catalog/models.json";
import { startGateway, type TestGateway } from "../support/gateway";
import { pricingModels } from "./html";
import { errorOf, jsonOf, type ListOf, type AnswerOf } from "../support/json";
import type { ModelCard } from "../../src/catalog/schemas";

/** GET /v1/models/{id}, with the field a retired card must leave out beyond the published schema. */
type CardAnswer = AnswerOf<typeof ModelCard> & { worked_example?: unknown };

let gw: TestGateway;
beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.stop());

const entries = llmData as any[];
const text = async (p: string) => {
  const r = await fetch(gw.url + p);
  expect(r.status).toBe(200);
  return r.text();
};

describe("/pricing", () => {
  test("within each type, current models come first, then legacy ones; retired ones are not on sale", async () => {
    const html = await text("/pricing");
    const shown = await pricingModels(html);
    const status = new Map(entries.map((e) => [e.id, e.status ?? "current"]));
    const llm = shown.filter((m) => m.type === "llm").map((m) => status.get(m.id));
    expect(llm[0]).toBe("current");
    expect(llm.lastIndexOf("current")).toBeLessThan(llm.indexOf("legacy"));
    expect(llm).not.toContain("retired");
    for (const e of entries.filter((x) => x.status === "retired")) expect(shown.map((m) => m.id)).not.toContain(e.id);
    expect(html).toMatch(/data-model-id="claude-opus-5"[^>]*data-status="legacy"/);
  });
});

describe("model cards", () => {
  test("every LLM card, retired ones included, renders its status and where its prices were checked", async () => {
    for (const e of entries) {
      const html = await text(`/models/${e.id}`);
      expect(html).toContain(`<span class="status">${e.status}</span>`);
      if (e.source) {
        expect(html).toContain(
          `<span class="checked">${e.checked}</span>, against <a class="source" href="${e.source}">`,
        );
      } else {
        expect(html).toContain('<span class="checked">not re-checked against the provider');
      }
    }
  });

  test("a retired card links its successor; GET /v1/models/{id} has the same lifecycle fields", async () => {
    const html = await text("/models/claude-3-5-haiku");
    expect(html).toContain('<a href="/models/claude-haiku-4-5"><code>claude-haiku-4-5</code></a>');
    const j = await (await fetch(gw.url + "/v1/models/claude-3-5-haiku")).json();
    expect(j).toMatchObject({ status: "retired", successor: "claude-haiku-4-5", checked: "2026-11-27" });
    const opus = await (await fetch(gw.url + "/v1/models/claude-opus-5")).json();
    expect(opus).toMatchObject({
      status: "legacy",
      released: "2026-07-24",
      retires_after: null,
      successor: null,
      source: "https://platform.claude.com/docs/about-claude/models/whats-new-opus-5",
      checked: "2026-11-27",
    });
  });

  test("a retired card offers no request to run: it says what a call answers (410 model_retired) and names the successor", async () => {
    const html = await text("/models/claude-3-5-haiku");
    expect(html).not.toContain('<pre class="curl"');
    expect(html).not.toContain('id="card-examples"');
    expect(html).not.toContain("Served on <code>POST");
    expect(html).toContain('<p class="retired-notice">');
    // what the card says is what the API answers
    const { key } = await gw.account(10);
    const r = await fetch(gw.url + "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-3-5-haiku", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    });
    const said = html.match(/<p class="retired-notice">([\s\S]*?)<\/p>/)![1];
    expect(said).toContain(`<code>${r.status} ${(await errorOf(r)).error.code}</code>`);
    expect(said).toContain('<a href="/models/claude-haiku-4-5"><code>claude-haiku-4-5</code></a>');
    // a model on sale keeps its ready-to-run request
    expect(await text("/models/claude-haiku-4-5")).toContain('<pre class="curl"');
  });

  test("GET /v1/models/{id} of a retired model offers no request either, only its prices and lifecycle", async () => {
    const retired = await jsonOf<CardAnswer>(await fetch(gw.url + "/v1/models/claude-3-5-haiku"));
    expect(retired.example).toBeUndefined();
    expect(retired.worked_example).toBeUndefined();
    expect(retired.price_rows.length).toBeGreaterThan(0);
    const onSale = await jsonOf<CardAnswer>(await fetch(gw.url + "/v1/models/claude-haiku-4-5"));
    expect(onSale.example!.request).toMatchObject({ method: "POST", path: "/v1/messages" });
  });

  test("a retired model whose provider names a replacement not sold here says so, on the card and in the 410", async () => {
    const html = await text("/models/gemini-3-pro-preview");
    const said = html.match(/<p class="retired-notice">([\s\S]*?)<\/p>/)![1];
    expect(said).toContain('<a href="/models/gpt-6.2-sol"><code>gpt-6.2-sol</code></a>');
    expect(said).toContain("<code>gemini-3.1-pro-preview</code>, is not sold here");
    const { key } = await gw.account(10);
    const r = await fetch(gw.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gemini-3-pro-preview", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(r.status).toBe(410);
    const { error } = await errorOf(r);
    expect(error.message).toContain(
      "Use gpt-6.2-sol instead (the provider's own replacement, gemini-3.1-pro-preview, is not sold here).",
    );
    // DeepSeek's own replacement is sold here: the 410 names it, with nothing to add.
    const deepseek = await text("/models/deepseek-chat");
    const notice = deepseek.match(/<p class="retired-notice">([\s\S]*?)<\/p>/)![1];
    expect(notice).toContain('<a href="/models/deepseek-flash"><code>deepseek-flash</code></a>');
    expect(notice).not.toContain("is not sold here");
  });

  test("GET /v1/models lists status, released, retires_after and successor for every model", async () => {
    const { data } = await jsonOf<ListOf<{ id: string }>>(await fetch(gw.url + "/v1/models"));
    for (const m of data)
      for (const k of ["status", "released", "retires_after", "successor", "source", "checked"])
        expect(k in m).toBe(true);
    expect(data.find((m: any) => m.id === "deepseek-chat")).toMatchObject({
      status: "retired",
      successor: "deepseek-flash",
      provider_successor: null,
      retires_after: "2026-07-24",
    });
  });
});
