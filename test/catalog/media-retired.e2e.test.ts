// The built-in catalog as shipped: a media model its provider shut down (gpt-image-1, OpenAI, 2026-10-23) answers
// 410 model_retired naming the model to use, on the task API's native and alias doors and on the estimate, before
// anything is held; its card and JSON say why, and /pricing sells it no more. Re-checked media entries show where
// and when their prices were read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, type TestGateway } from "../support/gateway";
import { errorOf, jsonOf, type AnswerOf, type EnvelopeError } from "../support/json";
import type { EstimateResponse } from "../../src/media/schemas";

let gw: TestGateway;
let key: string;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway({ OPENAI_API_KEY: "sk-test", KIE_API_KEY: "kie-test", FAL_KEY: "fal-test" });
  ({ key, accountId } = await gw.account(100));
});
afterAll(() => gw.stop());

const post = (path: string, body: unknown) => gw.post(key, path, body);

function namesTheWayOut(message: string) {
  expect(message).toContain("gpt-image-2-text-to-image");
  expect(message).toContain("2026-10-23");
  expect(message).toContain("gpt-image-2.5-sunburst"); // OpenAI's own replacement, not sold here
}

describe("gpt-image-1, shut down by OpenAI, answers 410 model_retired", () => {
  test("native task API: the envelope with code 410", async () => {
    const r = await post("/api/v1/jobs/createTask", {
      model: "gpt-image-1",
      input: { prompt: "a fox", quality: "low" },
    });
    expect(r.status).toBe(410);
    const body = await jsonOf<EnvelopeError>(r);
    expect(body).toMatchObject({ code: 410, error_code: "model_retired", data: null });
    namesTheWayOut(body.msg);
  });

  test("the OpenAI-style alias door: OpenAI's error shape", async () => {
    const r = await post("/v1/images/generations", { model: "gpt-image-1", prompt: "a fox", quality: "low" });
    expect(r.status).toBe(410);
    const { error } = await errorOf(r);
    expect(error).toMatchObject({ code: "model_retired", param: "model" });
    namesTheWayOut(error.message);
  });

  test("the public estimate", async () => {
    const r = await fetch(gw.url + "/v1/credits/estimate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-image-1", input: { prompt: "a fox" } }),
    });
    expect(r.status).toBe(410);
    namesTheWayOut(JSON.stringify(await r.json()));
  });

  test("its successor is on sale: the same request names it and is priced", async () => {
    const r = await fetch(gw.url + "/v1/credits/estimate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-image-2-text-to-image", input: { prompt: "a fox" } }),
    });
    expect(r.status).toBe(200);
    expect((await jsonOf<AnswerOf<typeof EstimateResponse>>(r)).estimated_credits).toBeGreaterThan(0);
  });

  test("nothing was held, charged or recorded", async () => {
    expect(await gw.ctx.ledger.balance(accountId)).toMatchObject({ available: 100_000_000, held: 0 });
    const rows = await gw.ctx.db.all<{ n: number }>(
      sql`select count(*) as n from tasks where account_id = ${accountId}`,
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });

  test("GET /v1/models/gpt-image-1 says it is retired, since when, what replaces it, and where that was read", async () => {
    const r = await fetch(gw.url + "/v1/models/gpt-image-1");
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      id: "gpt-image-1",
      status: "retired",
      retires_after: "2026-10-23",
      successor: "gpt-image-2-text-to-image",
      provider_successor: "gpt-image-2.5-sunburst",
      source: "https://developers.openai.com/ja-JP/api/docs/models/gpt-image-1",
      checked: "2026-11-27",
    });
  });

  test("its card offers no request to copy, only the way out", async () => {
    const html = await (await fetch(gw.url + "/models/gpt-image-1")).text();
    expect(html).toContain("retired-notice");
    expect(html).toContain("gpt-image-2-text-to-image");
    expect(html).not.toContain('data-example="native"');
  });
});

describe("the media lineup on the public pages", () => {
  test("a re-checked media model's JSON and card show the upstream's page and the day it was read", async () => {
    const json = await (await fetch(gw.url + "/v1/models/fal-ai/veo3.1")).json();
    expect(json).toMatchObject({
      status: "current",
      source: "https://fal.ai/models/fal-ai/veo3.1/llms.txt",
      checked: "2026-11-27",
    });
    const html = await (await fetch(gw.url + "/models/fal-ai/veo3.1")).text();
    expect(html).toContain('<span class="checked">2026-11-27</span>');
    expect(html).toContain('href="https://fal.ai/models/fal-ai/veo3.1/llms.txt"');
  });

  test("a media model not re-checked says so on its card", async () => {
    const html = await (await fetch(gw.url + "/models/kling-3.0/video")).text();
    expect(html).toMatch(/<span class="checked">not re-checked against the provider(&#39;|&#x27;|')s pages<\/span>/);
    expect(html).not.toContain('class="source"');
  });

  test("/pricing sells no retired media model and lists current media models before legacy ones in each table", async () => {
    const html = await (await fetch(gw.url + "/pricing")).text();
    expect(html).not.toContain('data-model-id="gpt-image-1"');
    for (const type of ["image", "video"]) {
      const statuses = [
        ...html.matchAll(new RegExp(`data-type="${type}" data-provider="[^"]*" data-status="(\\w+)"`, "g")),
      ].map((m) => m[1]);
      expect(statuses.length).toBeGreaterThan(5);
      expect(statuses).toContain("legacy");
      expect(statuses.indexOf("legacy")).toBeGreaterThan(statuses.lastIndexOf("current"));
    }
  });
});
