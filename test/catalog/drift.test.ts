// `cli catalog:check` against fake providers' own list-models endpoints, shaped as each provider documents them:
// a missing, a no-longer-served and a mispriced model are reported with exit status 1; lists that match give 0.
// A peak schedule whose holiday list ends within 30 days is reported (exit 1) under its provider.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadCatalog } from "../../src/catalog-loader";

const catalog = loadCatalog();
const sold = (provider: string) =>
  catalog.llmList.filter((m) => m.provider === provider && catalog.lifecycle.get(m.id)!.status !== "retired");

/** What each fake provider lists; the tests change it between runs. */
let lists: ReturnType<typeof matchingLists>;
const seen: Record<string, string | null> = {};

function matchingLists() {
  return {
    anthropic: sold("anthropic").map((m) => ({
      type: "model",
      id: m.upstream_model,
      display_name: m.name,
      created_at: "2026-01-01T00:00:00Z",
      max_input_tokens: m.context_window,
      max_tokens: m.max_output_tokens,
    })),
    openai: [
      ...sold("openai").map((m) => ({ id: m.upstream_model, object: "model", owned_by: "openai" })),
      { id: "whisper-1", object: "model" },
      { id: "tts-1-hd", object: "model" },
    ],
    gemini: sold("gemini").map((m) => ({
      name: `models/${m.upstream_model}`,
      inputTokenLimit: m.context_window,
      ...(m.max_output_tokens && { outputTokenLimit: m.max_output_tokens }),
    })),
    xai: sold("xai").map((m) => ({
      id: m.upstream_model,
      object: "model",
      aliases: [],
      prompt_text_token_price: Math.round(m.pricing.input * 10_000),
      completion_text_token_price: Math.round(m.pricing.output! * 10_000),
      ...(m.pricing.cache_read !== undefined && {
        cached_prompt_text_token_price: Math.round(m.pricing.cache_read * 10_000),
      }),
    })),
    deepseek: sold("deepseek").map((m) => ({ id: m.upstream_model, object: "model", owned_by: "deepseek" })),
  };
}

let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const url = new URL(req.url);
      const auth =
        req.headers.get("authorization") ?? req.headers.get("x-api-key") ?? req.headers.get("x-goog-api-key");
      switch (url.pathname) {
        case "/anthropic/v1/models": {
          seen.anthropic = auth;
          // two pages, as Anthropic pages with has_more / last_id / after_id
          const all = lists.anthropic;
          const half = Math.ceil(all.length / 2);
          const page = url.searchParams.get("after_id") ? all.slice(half) : all.slice(0, half);
          const more = !url.searchParams.get("after_id");
          return Response.json({
            data: page,
            has_more: more,
            first_id: page[0]?.id ?? null,
            last_id: page.at(-1)?.id ?? null,
          });
        }
        case "/openai/v1/models":
          seen.openai = auth;
          return Response.json({ object: "list", data: lists.openai });
        case "/gemini/v1beta/models":
          seen.gemini = auth;
          return Response.json({ models: lists.gemini });
        case "/xai/v1/language-models":
          seen.xai = auth;
          return Response.json({ models: lists.xai });
        case "/deepseek/models":
          seen.deepseek = auth;
          return Response.json({ object: "list", data: lists.deepseek });
      }
      return new Response("not found", { status: 404 });
    },
  });
});
afterAll(() => server.stop(true));

async function check(extraEnv: Record<string, string> = {}) {
  const base = `http://127.0.0.1:${server.port}`;
  const env = {
    ...process.env,
    DATABASE_URL: "/proc/no-such-dir/unused.sqlite", // catalog:check needs no database
    ANTHROPIC_API_KEY: "sk-ant-fake",
    ANTHROPIC_BASE_URL: `${base}/anthropic`,
    OPENAI_API_KEY: "sk-openai-fake",
    OPENAI_BASE_URL: `${base}/openai/v1`,
    GEMINI_API_KEY: "gemini-fake",
    GEMINI_BASE_URL: `${base}/gemini`,
    XAI_API_KEY: "xai-fake",
    XAI_BASE_URL: `${base}/xai/v1`,
    DEEPSEEK_API_KEY: "ds-fake",
    DEEPSEEK_BASE_URL: `${base}/deepseek`,
    ...extraEnv,
  };
  const proc = Bun.spawn(["bun", "src/cli.ts", "catalog:check"], {
    cwd: new URL("../..", import.meta.url).pathname,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
  return { code, report: JSON.parse(out) };
}

test("every provider's list matches the catalog: exit 0, each asked with its own key", async () => {
  lists = matchingLists();
  const { code, report } = await check();
  expect(report.ok).toBe(true);
  expect(code).toBe(0);
  for (const p of ["anthropic", "openai", "gemini", "xai", "deepseek"])
    expect(report.providers[p]).toEqual({ missing: [], not_served: [], differs: [] });
  expect(seen).toEqual({
    anthropic: "sk-ant-fake",
    openai: "Bearer sk-openai-fake",
    gemini: "gemini-fake",
    xai: "Bearer xai-fake",
    deepseek: "Bearer ds-fake",
  });
}, 30_000);

test("a missing, a no-longer-served and a mispriced model: each reported, exit 1", async () => {
  lists = matchingLists();
  lists.anthropic.push({
    type: "model",
    id: "claude-newmodel-9-20261120",
    display_name: "New",
    created_at: "2026-11-20T00:00:00Z",
    max_input_tokens: 1_000_000,
    max_tokens: 128_000,
  });
  const dropped = lists.openai.shift()!; // the provider retired it
  const repriced = lists.xai[0]!;
  repriced.prompt_text_token_price += 5_000; // +$0.50 per million
  const limited = lists.gemini[0]!;
  limited.inputTokenLimit = 500_000;
  const { code, report } = await check();
  expect(code).toBe(1);
  expect(report.ok).toBe(false);
  expect(report.providers.anthropic.missing).toEqual(["claude-newmodel-9-20261120"]);
  const droppedModel = sold("openai").find((m) => m.upstream_model === dropped.id)!;
  expect(report.providers.openai.not_served).toEqual([droppedModel.id]);
  const xaiModel = sold("xai").find((m) => m.upstream_model === repriced.id)!;
  expect(report.providers.xai.differs).toEqual([
    {
      model: xaiModel.id,
      field: "pricing.input",
      catalog: xaiModel.pricing.input,
      provider: xaiModel.pricing.input + 0.5,
    },
  ]);
  const geminiModel = sold("gemini").find((m) => `models/${m.upstream_model}` === limited.name)!;
  expect(report.providers.gemini.differs).toEqual([
    { model: geminiModel.id, field: "context_window", catalog: geminiModel.context_window, provider: 500_000 },
  ]);
  expect(report.providers.deepseek).toEqual({ missing: [], not_served: [], differs: [] });
}, 30_000);

test("a provider without a key is skipped; one whose list fails is an error (status only), exit 1", async () => {
  lists = matchingLists();
  const { code, report } = await check({
    XAI_API_KEY: "",
    DEEPSEEK_BASE_URL: `http://127.0.0.1:${server.port}/nowhere`,
  });
  expect(code).toBe(1);
  expect(report.skipped).toEqual(["xai"]);
  expect(report.providers.deepseek.error).toMatch(/answered HTTP 404$/);
  expect(report.providers.anthropic).toEqual({ missing: [], not_served: [], differs: [] });
}, 30_000);

test("a holiday list ending within 30 days is reported under its provider, exit 1; 30 days ahead it is not", async () => {
  lists = matchingLists();
  const soon = await check({ CATALOG_DAY: "2026-12-02" });
  expect(soon.code).toBe(1);
  expect(soon.report.providers.deepseek).toEqual({
    missing: [],
    not_served: [],
    differs: [],
    holiday_lists_ending: sold("deepseek")
      .filter((m) => m.prices.peak)
      .map((m) => ({ model: m.id, holidays_through: "2026-12-31", days_left: 29 })),
  });
  expect(soon.report.providers.deepseek.holiday_lists_ending.length).toBeGreaterThan(0);
  expect(soon.report.providers.anthropic).toEqual({ missing: [], not_served: [], differs: [] });
  const ahead = await check({ CATALOG_DAY: "2026-12-01" });
  expect(ahead.report.providers.deepseek).toEqual({ missing: [], not_served: [], differs: [] });
  expect(ahead.code).toBe(0);
}, 30_000);
