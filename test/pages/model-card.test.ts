import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { usdPerMillionToMicrosPerToken } from "../../src/ledger/units";
import { startGateway, type TestGateway } from "../support/gateway";
import { creditsTextToMicros, expectedLlmRows, expectedMediaRows, llmEntries, mediaEntries } from "./catalog-data";
import { attrs, cardExamples, cardRows, num, texts } from "./html";

const BASE = "https://gw.example.test";
let gw: TestGateway;
beforeAll(async () => (gw = await startGateway({ PUBLIC_BASE_URL: BASE })));
afterAll(() => gw.stop());

const path = (id: string) => id.split("/").map(encodeURIComponent).join("/");
const card = async (id: string) => {
  const r = await fetch(`${gw.url}/models/${path(id)}`);
  expect(r.status).toBe(200);
  return r.text();
};
const json = async (id: string): Promise<any> => {
  const r = await fetch(`${gw.url}/v1/models/${path(id)}`);
  expect(r.status).toBe(200);
  return r.json();
};

describe("LLM and embedding cards", () => {
  test("a card of time-of-day prices shows both prices, the peak hours and which moment decides; its JSON the schedule", async () => {
    const page = await card("deepseek-flash");
    const rows = await cardRows(page);
    const usd = (label: string) => num(rows.find((r) => r.label === label)!.usd);
    expect([usd("input"), usd("output"), usd("cache read")]).toEqual([0.15, 0.6, 0.003]);
    expect([usd("input, peak hours"), usd("output, peak hours"), usd("cache read, peak hours")]).toEqual([
      0.3, 1.2, 0.006,
    ]);
    const note = (await texts(page, "p.peak-note"))[0]!;
    expect(note).toContain("Peak hours: 09:00–12:00 and 14:00–18:00 UTC+08:00 on mon, tue, wed, thu, fri");
    expect(note).toContain("the period in which the gateway sent it upstream");
    expect(note).toContain("held at the peak price");
    // 1,000 input + 500 output tokens: 150,000 + 300,000 µcr off-peak, twice that in peak hours
    const worked = (await texts(page, "p.worked strong"))[0]!;
    expect(worked).toBe(
      "1,000 input + 500 output tokens = 0.45 credits (0.00045 USD) off-peak; 0.9 credits (0.0009 USD) in peak hours",
    );
    const m = await json("deepseek-flash");
    expect(m.pricing).toMatchObject({ input: 0.15, output: 0.6, cache_read: 0.003 });
    expect(m.pricing.peak).toMatchObject({
      utc_offset: "+08:00",
      days: ["mon", "tue", "wed", "thu", "fri"],
      windows: [
        ["09:00", "12:00"],
        ["14:00", "18:00"],
      ],
      input: 0.3,
      output: 1.2,
      cache_read: 0.006,
    });
    expect(m.price_rows.map((r: { label: string }) => r.label)).toContain("output, peak hours");
    expect((await card("gpt-6-luna")).includes("peak-note")).toBe(false);
  });

  test("an LLM card names the endpoints it is translated on and that they cost the same; an embedding card none", async () => {
    const page = await card("gemini-2.5-pro");
    expect(page).toContain("POST /v1/chat/completions");
    expect(page).toMatch(
      /Also served on <code>POST \/v1\/messages<\/code> \(Anthropic Messages\) and <code>POST \/v1\/responses<\/code> \(OpenAI Responses\)/,
    );
    expect(page).toContain("costs the same");
    expect((await json("gemini-2.5-pro")).endpoints).toEqual(["/v1/chat/completions", "/v1/messages", "/v1/responses"]);
    const emb = await card("text-embedding-3-small");
    expect(emb).not.toContain("Also served on");
    expect(emb).not.toContain("translated");
  });

  test("every card shows the catalog's prices, a worked example in exact µcr, the protocol and an SDK call", async () => {
    const sdkFor: Record<string, string> = {
      "/v1/messages": "client.messages.create",
      "/v1/responses": "client.responses.create",
      "/v1/chat/completions": "client.chat.completions.create",
      "/v1/embeddings": "client.embeddings.create",
    };
    const transpiler = new Bun.Transpiler({ loader: "ts" });
    for (const e of llmEntries) {
      const page = await card(e.id);
      expect((await texts(page, "h1"))[0]).toBe(e.name);
      expect(page).toContain(`POST ${e.endpoint}`);
      const rows = await cardRows(page);
      const expected = expectedLlmRows(e);
      expect(rows.map((r) => r.label)).toEqual(expected.map((x) => x.label));
      rows.forEach((r, i) => {
        expect(num(r.usd)).toBe(expected[i]!.usd);
        expect(creditsTextToMicros(r.credits)).toBe(expected[i]!.creditsMicros);
      });
      // 1,000 input (+ 500 output) tokens, priced from the data file with the ledger's exact conversion.
      const micros =
        1000 * usdPerMillionToMicrosPerToken(e.pricing.input) +
        (e.type === "llm" ? 500 * usdPerMillionToMicrosPerToken(e.pricing.output) : 0);
      expect(Number((await attrs(page, "p.worked", "data-micros"))[0])).toBe(micros);
      const worked = (await texts(page, "p.worked strong"))[0]!;
      expect(creditsTextToMicros(/= ([\d,.]+) credits/.exec(worked)![1]!)).toBe(micros);
      // The SDK snippet targets the model's protocol and the public base URL, and is valid TypeScript.
      const [sdk] = await texts(page, "pre.sdk");
      expect(sdk).toContain(sdkFor[e.endpoint]!);
      expect(sdk).toContain(e.endpoint === "/v1/messages" ? `baseURL: "${BASE}"` : `baseURL: "${BASE}/v1"`);
      expect(sdk).toContain(e.endpoint === "/v1/messages" ? "@anthropic-ai/sdk" : 'from "openai"');
      expect(() => transpiler.transformSync(sdk!)).not.toThrow();
      const ex = await cardExamples(page);
      expect(ex.request).toMatchObject({ method: "POST", path: e.endpoint, body: { model: e.id } });
      const [curl] = await texts(page, 'pre[data-example="request"]');
      expect(curl).toContain(`curl -s ${BASE}${e.endpoint}`);
      expect(curl).toContain(JSON.stringify(ex.request.body, null, 2));
    }
  });

  test("GET /v1/models/{id} returns the same facts as JSON; an alias redirects the card to the model's", async () => {
    const e = llmEntries.find((x) => x.id === "claude-sonnet-4-5");
    const m = await json(e.id);
    expect(m).toMatchObject({ id: e.id, endpoint: "/v1/messages", card_url: `${BASE}/models/claude-sonnet-4-5` });
    expect(m.price_rows.map((r: any) => [r.label, Number(r.usd)])).toEqual(
      expectedLlmRows(e).map((r) => [r.label, r.usd]),
    );
    expect(m.worked_example).toMatchObject({ tokens: { input: 1000, output: 500 }, credits: 10.5, usd: "0.0105" });
    expect(m.worked_example.text).toBe("1,000 input + 500 output tokens = 10.5 credits (0.0105 USD)");
    expect(m.example.request.body.model).toBe(e.id);
    const r = await fetch(`${gw.url}/models/claude-sonnet-4-5-20250929`, { redirect: "manual" });
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("/models/claude-sonnet-4-5");
    expect((await json("claude-sonnet-4-5-20250929")).id).toBe("claude-sonnet-4-5");
  });
});

describe("media cards", () => {
  test("every card shows its rule's prices, every input field with type, required, allowed values and default", async () => {
    if (!mediaEntries.length) return console.warn("SKIPPED: no media models in the catalog yet");
    for (const e of mediaEntries) {
      const page = await card(e.id);
      const rows = await cardRows(page);
      const expected = await expectedMediaRows(e);
      expect(rows.map((r) => [r.label, num(r.usd), creditsTextToMicros(r.credits)])).toEqual(
        expected.map((x) => [x.label, x.usd, x.creditsMicros]),
      );
      const names = await attrs(page, "tr.field", "data-field");
      expect(names).toEqual(Object.keys(e.input.properties));
      const cells = await texts(page, "tr.field td");
      const perField = names.map((_, i) => cells.slice(i * 6, i * 6 + 6));
      names.forEach((name, i) => {
        const def = e.input.properties[name];
        const [shownName, type, required, allowed, dflt] = perField[i]!;
        expect(shownName).toBe(name);
        expect(type).toStartWith(def.type);
        expect(required).toBe(e.input.required.includes(name) ? "yes" : "no");
        for (const v of def.enum ?? []) expect(allowed).toContain(JSON.stringify(v));
        for (const k of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"])
          if (def[k] !== undefined) expect(allowed).toContain(String(def[k]));
        expect(dflt).toBe(def.default === undefined ? "—" : JSON.stringify(def.default));
      });
    }
  });

  test("the card's estimate is the rule's estimate of the validated sample input; the examples post that input", async () => {
    if (!mediaEntries.length) return console.warn("SKIPPED: no media models in the catalog yet");
    const { validateInput } = await import("../../src/media/input-schema");
    const { estimateCost } = await import("../../src/media/pricing");
    const alias: Record<string, string> = {
      image: "/v1/images/generations",
      video: "/v1/videos",
      audio: "/v1/music/generations",
    };
    for (const e of mediaEntries) {
      const page = await card(e.id);
      const ex = await cardExamples(page);
      const v = validateInput(e.input, ex.native.body.input);
      if (!v.ok) throw new Error(`${e.id}: card sample refused: ${v.message}`);
      for (const f of e.input.required) expect(ex.native.body.input).toHaveProperty(f);
      // Defaults are spelled out, so the reader sees what the price depends on.
      for (const [f, def] of Object.entries<any>(e.input.properties)) {
        if (def.default !== undefined && !e.input.required.includes(f))
          expect(ex.native.body.input[f]).toEqual(def.default);
      }
      const micros = estimateCost(e.pricing, v.value);
      expect(ex.estimated_credits * 1_000_000).toBe(micros);
      expect(creditsTextToMicros((await texts(page, "span.estimate-credits"))[0]!)).toBe(micros);
      expect(ex.native).toMatchObject({ path: "/api/v1/jobs/createTask", body: { model: e.id } });
      expect(ex.alias.path).toBe(alias[e.type]!);
      expect(ex.alias.body).toEqual({ model: e.id, ...ex.native.body.input, max_credits: ex.estimated_credits });
      expect(ex.estimate).toMatchObject({
        path: "/v1/credits/estimate",
        body: { model: e.id, ...ex.native.body.input },
      });
      for (const which of ["native", "alias", "estimate"]) {
        const [curl] = await texts(page, `pre[data-example="${which}"]`);
        expect(curl).toContain(`curl -s ${BASE}${ex[which].path}`);
        expect(curl).toContain(JSON.stringify(ex[which].body, null, 2).replaceAll("'", "'\\''"));
      }
    }
  });

  test("GET /v1/models/{id} carries the input JSON Schema and the price rows", async () => {
    if (!mediaEntries.length) return console.warn("SKIPPED: no media models in the catalog yet");
    const { toJsonSchema } = await import("../../src/media/input-schema");
    for (const e of mediaEntries) {
      const m = await json(e.id);
      expect(m.input_schema).toEqual(toJsonSchema(e.input));
      expect(m.input_schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(m.price_rows.map((r: any) => [r.label, Number(r.usd)])).toEqual(
        (await expectedMediaRows(e)).map((x) => [x.label, x.usd]),
      );
      expect(m.card_url).toBe(`${BASE}/models/${path(e.id)}`);
      expect(m.example.requests.native.body.model).toBe(e.id);
    }
  });
});

describe("unknown ids and caching", () => {
  test("an unknown id is a 404 HTML page on /models and a 404 in the OpenAI error shape on /v1/models", async () => {
    const page = await fetch(`${gw.url}/models/acme/no-such-model`);
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toContain("text/html");
    const body = await page.text();
    expect(body).toContain("Model not found");
    expect(body).toContain("acme/no-such-model");
    const api = await fetch(`${gw.url}/v1/models/acme/no-such-model`);
    expect(api.status).toBe(404);
    const err: any = await api.json();
    expect(err.error).toMatchObject({ code: "not_found", type: "not_found_error" });
    expect(err.error.message).toContain("acme/no-such-model");
    expect(err.request_id).toBeString();
  });

  test("an id with a malformed escape (%ZZ) is the same 404 on both, not a 500", async () => {
    const page = await fetch(`${gw.url}/models/acme/x%ZZ`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("Model not found");
    const api = await fetch(`${gw.url}/v1/models/acme/x%ZZ`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as any).error).toMatchObject({ code: "not_found", type: "not_found_error" });
  });

  test("cards carry an ETag from the catalog fingerprint and answer 304", async () => {
    const r = await fetch(`${gw.url}/models/gpt-5.1`);
    const etag = r.headers.get("etag")!;
    expect(etag).toStartWith(`"${gw.ctx.catalog.version}-`);
    expect((await fetch(`${gw.url}/models/gpt-5.1`, { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await fetch(`${gw.url}/models/gpt-5`)).headers.get("etag")).not.toBe(etag);
  });
});
