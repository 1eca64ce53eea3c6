import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCatalog } from "../../src/catalog-loader";
import { startGateway, type TestGateway } from "../support/gateway";
import { errorOf, jsonOf, type ListOf } from "../support/json";

/** A model as /v1/models lists it: its lifecycle fields, and the price these tests read. */
type LifecycleFields = {
  id: string;
  status: string;
  successor: string | null;
  retires_after: string | null;
  pricing: { input: number };
};

// A model its provider retired answers 410 model_retired naming its successor, in the error shape of the door it was
// called through, before anything is held or sent upstream.

function catalogFile(entries: unknown[]): string {
  const path = join(mkdtempSync(join(tmpdir(), "sy-life-")), "catalog.json");
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

const retirements = [
  { id: "claude-opus-4-5", status: "retired", successor: "claude-opus-5-5", retires_after: "2026-10-01" },
  { id: "gpt-5", status: "retired", successor: "gpt-5.1" },
  { id: "gpt-5.2", status: "retired", successor: "gpt-5.1" },
  { id: "text-embedding-3-small", status: "retired", successor: "text-embedding-3-large" },
  { id: "google/nano-banana", status: "retired", successor: "nano-banana-2" },
];

let gw: TestGateway;
let key: string;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway({
    CATALOG_PATH: catalogFile(retirements),
    ANTHROPIC_API_KEY: "sk-ant-test",
    OPENAI_API_KEY: "sk-test",
    KIE_API_KEY: "kie-test",
  });
  ({ key, accountId } = await gw.account(100));
});
afterAll(() => gw.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => gw.post(key, path, body, headers);

describe("a retired model answers 410 model_retired naming its successor", () => {
  test("Messages: Anthropic's error shape", async () => {
    const r = await post(
      "/v1/messages",
      { model: "claude-opus-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
      { "anthropic-version": "2023-06-01" },
    );
    expect(r.status).toBe(410);
    const body = await errorOf(r);
    expect(body.type).toBe("error");
    expect(body.error.code).toBe("model_retired");
    expect(body.error.message).toContain("claude-opus-5-5");
    expect(body.error.message).toContain("2026-10-01");
  });

  test("by its dated alias too", async () => {
    const r = await post("/v1/messages", {
      model: "claude-opus-4-5-20251101",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(r.status).toBe(410);
    expect((await errorOf(r)).error.code).toBe("model_retired");
  });

  for (const [path, body, successor] of [
    ["/v1/responses", { model: "gpt-5", input: "hi" }, "gpt-5.1"],
    ["/v1/chat/completions", { model: "gpt-5.2", messages: [{ role: "user", content: "hi" }] }, "gpt-5.1"],
    ["/v1/embeddings", { model: "text-embedding-3-small", input: "hi" }, "text-embedding-3-large"],
  ] as const) {
    test(`${path}: OpenAI's error shape`, async () => {
      const r = await post(path, body);
      expect(r.status).toBe(410);
      const { error } = await errorOf(r);
      expect(error).toMatchObject({ code: "model_retired", param: "model" });
      expect(error.message).toContain(successor);
    });
  }

  test("xAI's retired grok-4 (built-in catalog) on its native Responses door names grok-4.20 and xAI's own grok-4.3", async () => {
    const r = await post("/v1/responses", { model: "grok-4", input: "hi" });
    expect(r.status).toBe(410);
    const { error } = await errorOf(r);
    expect(error).toMatchObject({ code: "model_retired", param: "model" });
    expect(error.message).toContain("grok-4.20");
    expect(error.message).toContain("grok-4.3");
    expect(error.message).toContain("2026-05-15");
  });

  test("media: the task API envelope, the OpenAI-style alias and the public estimate", async () => {
    const input = { prompt: "a cat" };
    const native = await post("/api/v1/jobs/createTask", { model: "google/nano-banana", input });
    expect(native.status).toBe(410);
    expect(await native.json()).toMatchObject({ code: 410, error_code: "model_retired", data: null });
    const alias = await post("/v1/images/generations", { model: "google/nano-banana", prompt: "a cat" });
    expect(alias.status).toBe(410);
    expect((await errorOf(alias)).error).toMatchObject({ code: "model_retired" });
    const estimate = await fetch(gw.url + "/v1/credits/estimate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "google/nano-banana", input }),
    });
    expect(estimate.status).toBe(410);
    const e = await estimate.json();
    expect(JSON.stringify(e)).toContain("nano-banana-2");
  });

  test("a retired LLM named on the media estimate answers 410 naming its successor, not the endpoint it no longer has", async () => {
    const r = await fetch(gw.url + "/v1/credits/estimate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "deepseek-chat", input: { prompt: "a cat" } }),
    });
    expect(r.status).toBe(410);
    const text = JSON.stringify(await r.json());
    expect(text).toContain("model_retired");
    expect(text).toContain("deepseek-flash");
    expect(text).not.toContain("/v1/responses");
    const task = await post("/api/v1/jobs/createTask", { model: "deepseek-chat", input: { prompt: "a cat" } });
    expect(task.status).toBe(410);
    // a language model on sale still gets the pointer to its own endpoint
    const live = await fetch(gw.url + "/v1/credits/estimate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-6-luna", input: { prompt: "a cat" } }),
    });
    expect(live.status).toBe(422);
    expect(JSON.stringify(await live.json())).toContain("POST /v1/responses");
  });

  test("nothing is held or charged", async () => {
    const b = await gw.ctx.ledger.balance(accountId);
    expect(b).toMatchObject({ available: 100_000_000, held: 0 });
  });

  test("GET /v1/models shows the lifecycle of each model", async () => {
    const { data } = await jsonOf<ListOf<LifecycleFields>>(await fetch(gw.url + "/v1/models"));
    const opus = data.find((m) => m.id === "claude-opus-4-5")!;
    expect(opus).toMatchObject({ status: "retired", successor: "claude-opus-5-5", retires_after: "2026-10-01" });
    expect(opus.pricing.input).toBeGreaterThan(0); // amended in place: the built-in entry's other fields stay
    const media = data.find((m: any) => m.id === "google/nano-banana");
    expect(media).toMatchObject({ status: "retired", successor: "nano-banana-2" });
  });
});

describe("a bad CATALOG_PATH entry stops loading with one line naming the file, the entry and the field", () => {
  const base = {
    type: "llm",
    name: "x",
    description: "x",
    endpoint: "/v1/chat/completions",
    provider: "openai",
    upstream_model: "x",
    capabilities: [],
    pricing: { input: 1, output: 2 },
  };
  const cases: Array<[string, unknown[], RegExp]> = [
    ["an unknown field", [{ ...base, id: "m1", contxt_window: 5 }], /entry "m1", field contxt_window: unknown field/],
    [
      "an unknown price",
      [{ ...base, id: "m2", pricing: { input: 1, output: 2, cache_reed: 0.1 } }],
      /entry "m2", field pricing\.cache_reed: unknown field/,
    ],
    [
      "a negative price",
      [{ ...base, id: "m3", pricing: { input: -1, output: 2 } }],
      /entry "m3", field pricing\.input: must be a non-negative number/,
    ],
    [
      "a non-numeric price",
      [{ ...base, id: "m4", pricing: { input: 1, output: "2" } }],
      /entry "m4", field pricing\.output: must be a non-negative number/,
    ],
    [
      "a non-numeric long-context price",
      [{ ...base, id: "m5", pricing: { input: 1, output: 2, long_context: { above_input_tokens: 10, input: "x" } } }],
      /entry "m5", field pricing\.long_context\.input/,
    ],
    [
      "a duplicate id in the file",
      [
        { ...base, id: "m6" },
        { ...base, id: "m6" },
      ],
      /entry "m6", field id: duplicate id/,
    ],
    [
      "a duplicate of a built-in alias",
      [{ ...base, id: "claude-sonnet-4-5-20250929" }],
      /entry "claude-sonnet-4-5-20250929", field id: .*already names claude-sonnet-4-5/,
    ],
    [
      "an unknown endpoint",
      [{ ...base, id: "m7", endpoint: "/v1/complete" }],
      /entry "m7", field endpoint: "\/v1\/complete" is not one of/,
    ],
    [
      "an unknown status",
      [{ ...base, id: "m8", status: "deprecated" }],
      /entry "m8", field status: must be one of current, legacy, retired/,
    ],
    [
      "a retired model without a successor",
      [{ id: "gpt-5.1", status: "retired" }],
      /entry "gpt-5.1", field successor: is required/,
    ],
    [
      "a successor not in the catalog",
      [{ id: "gpt-5", status: "retired", successor: "gpt-9" }],
      /entry "gpt-5", field successor: "gpt-9" is not in the catalog/,
    ],
    ["a bad date", [{ ...base, id: "m9", released: "27/11/2026" }], /entry "m9", field released: must be a date/],
    [
      "a date of no month",
      [{ ...base, id: "m11", retires_after: "2026-13-01" }],
      /entry "m11", field retires_after: must be a date/,
    ],
    [
      "a provider_successor that is not a model id",
      [{ id: "gpt-5.1", status: "retired", successor: "gpt-6-luna", provider_successor: 5 }],
      /entry "gpt-5.1", field provider_successor: must be a model id/,
    ],
    [
      "a dated alias that is not the snapshot called",
      [{ ...base, id: "m10", aliases: ["m10-20261101"], upstream_model: "m10" }],
      /entry "m10", field aliases: "m10-20261101" is a dated snapshot id, so upstream_model must be it/,
    ],
    [
      "a media entry's unknown field",
      [{ id: "google/nano-banana", status: "legacy", colour: "red" }],
      /entry "google\/nano-banana".*unknown key "colour"/,
    ],
  ];
  for (const [what, entries, message] of cases) {
    test(what, () => {
      const path = catalogFile(entries);
      let error: Error | undefined;
      try {
        loadCatalog(path);
      } catch (e) {
        error = e as Error;
      }
      expect(error?.message).toMatch(message);
      expect(error!.message).toStartWith(`CATALOG_PATH ${path}: `);
      expect(error!.message).not.toContain("\n");
    });
  }
});
