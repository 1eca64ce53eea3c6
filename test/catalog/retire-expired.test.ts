import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCatalog } from "../../src/catalog-loader";
import { buildCatalog, CatalogError } from "../../src/catalog/service";
import { compileMediaModel } from "../../src/media/model";
import { ConfigError, loadConfig } from "../../src/config";
import { startGateway, type TestGateway } from "../support/gateway";
import { errorOf, jsonOf, type ListOf } from "../support/json";

// A model served until its provider's last day of service (`retires_after`) answers 410 model_retired from the next
// UTC day on, in a gateway that was started before that day and kept running: the catalog cannot go stale silently.

function catalogFile(entries: unknown[]): string {
  const path = join(mkdtempSync(join(tmpdir(), "sy-retire-")), "catalog.json");
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

const statusOf = (catalog: ReturnType<typeof loadCatalog>, id: string) =>
  (catalog.publicModel(id) as { status: string }).status;

describe("a running gateway retires a model the day after its last day of service", () => {
  // claude-sonnet-4-5: legacy, retires_after 2026-11-30, successor claude-sonnet-5 (built-in catalog).
  let now = Date.parse("2026-11-30T23:59:59Z");
  const catalog = buildCatalog(undefined, compileMediaModel, () => now);

  test("served through its last day; 410 naming the successor from the next day's first second", () => {
    expect(() => catalog.servable({ id: "claude-sonnet-4-5" })).not.toThrow();
    expect(statusOf(catalog, "claude-sonnet-4-5")).toBe("legacy");
    const before = catalog.version;
    now += 1000; // 2026-12-01T00:00:00Z
    let refused: any;
    try {
      catalog.servable({ id: "claude-sonnet-4-5" });
    } catch (e) {
      refused = e;
    }
    expect(refused).toMatchObject({ status: 410, code: "model_retired" });
    expect(refused.message).toContain("Use claude-sonnet-5 instead");
    expect(refused.message).toContain("after 2026-11-30");
    expect(statusOf(catalog, "claude-sonnet-4-5")).toBe("retired");
    expect(catalog.version).not.toBe(before); // pages' ETags change with it
  });

  test("what was built from the catalog is built again", () => {
    let builds = 0;
    const list = catalog.derived(() => ++builds);
    expect([list(), list()]).toEqual([1, 1]);
    now = Date.parse("2026-12-12T00:00:00Z"); // gpt-5, gpt-5-mini, gpt-5-nano: last day 2026-12-11
    expect(list()).toBe(2);
    expect(statusOf(catalog, "gpt-5-mini")).toBe("retired");
  });
});

test("a successor retired since is skipped: the 410 names the first model down the chain still served", () => {
  const path = catalogFile([
    { id: "claude-sonnet-5", retires_after: "2027-01-31", successor: "claude-opus-5-5" },
    { id: "claude-sonnet-4-5", retires_after: "2026-11-30", successor: "claude-sonnet-5" },
  ]);
  const catalog = buildCatalog(path, compileMediaModel, () => Date.parse("2027-02-01T08:00:00Z"));
  expect(() => catalog.servable({ id: "claude-sonnet-4-5" })).toThrow("Use claude-opus-5-5 instead");
});

test("an operator's entry marking it current keeps it served past the day", () => {
  const path = catalogFile([{ id: "claude-sonnet-4-5", status: "current" }]);
  const catalog = buildCatalog(path, compileMediaModel, () => Date.parse("2026-12-05T08:00:00Z"));
  expect(() => catalog.servable({ id: "claude-sonnet-4-5" })).not.toThrow();
});

describe("bad input stops startup naming the entry and the field", () => {
  test("a last day of service without a successor", () => {
    const path = catalogFile([{ id: "claude-opus-5", retires_after: "2027-07-24" }]);
    expect(() => loadCatalog(path)).toThrow(CatalogError);
    expect(() => loadCatalog(path)).toThrow(/entry "claude-opus-5", field successor: is required with retires_after/);
  });

  test("CATALOG_DAY that is not a day", () => {
    expect(() => loadConfig({ DATABASE_URL: ":memory:", CATALOG_DAY: "December 1" })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: ":memory:", CATALOG_DAY: "December 1" })).toThrow(/CATALOG_DAY/);
  });
});

describe("CATALOG_DAY past a model's last day, on every door", () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway({ CATALOG_DAY: "2026-12-01", ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: "sk-test" });
    ({ key } = await gw.account(100));
  });
  afterAll(() => gw.stop());
  const post = (path: string, body: unknown) => gw.post(key, path, body);
  const chat = { model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };

  test("Messages, Chat Completions and Responses answer 410 in their own shapes; nothing is held", async () => {
    const messages = await post("/v1/messages", chat);
    expect(messages.status).toBe(410);
    expect(await messages.json()).toMatchObject({ type: "error", error: { type: expect.any(String) } });
    const completions = await post("/v1/chat/completions", chat);
    expect(completions.status).toBe(410);
    expect((await errorOf(completions)).error).toMatchObject({ code: "model_retired", param: "model" });
    const responses = await post("/v1/responses", { model: "claude-sonnet-4-5", input: "hi" });
    expect(responses.status).toBe(410);
    expect((await errorOf(responses)).error.message).toContain("claude-sonnet-5");
    const wallet = await jsonOf<{ credits: number; held_credits: number }>(
      await fetch(gw.url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } }),
    );
    expect(wallet).toMatchObject({ credits: 100, held_credits: 0 });
  });

  test("/v1/models says retired; /pricing no longer lists it; its card says so", async () => {
    const list = await jsonOf<ListOf<{ id: string; status: string }>>(await fetch(gw.url + "/v1/models"));
    expect(list.data.find((m) => m.id === "claude-sonnet-4-5")?.status).toBe("retired");
    expect(list.data.find((m) => m.id === "claude-sonnet-5")?.status).toBe("legacy");
    const pricing = await (await fetch(gw.url + "/pricing")).text();
    expect(pricing).not.toContain("/models/claude-sonnet-4-5");
    expect(pricing).toContain("/models/claude-sonnet-5");
    const card = await (await fetch(gw.url + "/models/claude-sonnet-4-5")).text();
    expect(card).toContain("410 model_retired");
  });
});

test("the day before, the same model is served as legacy", async () => {
  const catalog = loadCatalog(undefined, "2026-11-30");
  expect(() => catalog.servable({ id: "claude-sonnet-4-5" })).not.toThrow();
  expect(statusOf(catalog, "claude-sonnet-4-5")).toBe("legacy");
});
