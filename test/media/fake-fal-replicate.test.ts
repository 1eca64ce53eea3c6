import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mp4DurationSeconds, startFakeMediaUpstreams } from "../fakes/media/index";

const up = startFakeMediaUpstreams();
afterAll(() => up.stop());
beforeEach(() => up.control.reset());

async function req(url: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { "content-type": "application/json", ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

describe("fal queue", () => {
  const key = { authorization: `Key ${up.keys.fal}` };
  const submit = (model: string, input: Record<string, unknown>) =>
    req(`${up.urls.fal}/${model}`, { body: input, headers: key });
  const get = (url: string, method = "GET") => req(url, { method, headers: key });

  test("needs `Authorization: Key`", async () => {
    expect(
      (await req(`${up.urls.fal}/fal-ai/veo3.1`, { body: {}, headers: { authorization: `Bearer ${up.keys.fal}` } }))
        .status,
    ).toBe(401);
  });

  test("submit → IN_QUEUE 202 → IN_PROGRESS 202 → COMPLETED 200 → video result downloads", async () => {
    up.control.set({ polls: 2 });
    const model = "fal-ai/kling-video/v2.5-turbo/pro/text-to-video";
    const s = (await submit(model, { prompt: "waves", duration: "10" })).json;
    expect(Object.keys(s)).toEqual(expect.arrayContaining(["request_id", "response_url", "status_url", "cancel_url"]));
    expect(s.status_url).toBe(`${up.urls.fal}/fal-ai/kling-video/requests/${s.request_id}/status`); // first two segments only
    expect((await get(s.response_url)).status).toBe(400); // not complete yet
    const a = await get(s.status_url);
    expect([a.status, a.json.status, a.json.queue_position]).toEqual([202, "IN_QUEUE", 0]);
    const b = await get(s.status_url);
    expect([b.status, b.json.status]).toEqual([202, "IN_PROGRESS"]);
    const c = await get(s.status_url);
    expect([c.status, c.json.status]).toEqual([200, "COMPLETED"]);
    expect(c.json.metrics).toBeDefined();
    const out = (await get(s.response_url)).json;
    expect(out.video.content_type).toBe("video/mp4");
    const file = await fetch(out.video.url);
    expect(mp4DurationSeconds(new Uint8Array(await file.arrayBuffer()))).toBe(10);
  });

  test("image and audio output shapes", async () => {
    up.control.set({ polls: 0 });
    const img = (await submit("fal-ai/wan-25-preview/text-to-image", { prompt: "x", num_images: 2 })).json;
    await get(img.status_url);
    const images = (await get(img.response_url)).json.images;
    expect(images).toHaveLength(2);
    expect((await fetch(images[1].url)).headers.get("content-type")).toBe("image/png");
    up.control.once({ output: "audio", seconds: 3 });
    const aud = (await submit("fal-ai/lyria2", { prompt: "x" })).json;
    await get(aud.status_url);
    const audio = (await get(aud.response_url)).json.audio;
    expect((await fetch(audio.url)).headers.get("content-type")).toBe("audio/mpeg");
  });

  test("refusal is a {detail:[...]} error with X-Fal-Retryable", async () => {
    up.control.once({ refuse: { message: "prompt too long" } });
    const r = await submit("fal-ai/veo3.1", { prompt: "x" });
    expect(r.status).toBe(422);
    expect(r.json.detail[0]).toMatchObject({ msg: "prompt too long", type: "value_error" });
    expect(r.headers.get("x-fal-retryable")).toBe("false");
    up.control.once({ refuse: { status: 503, message: "overloaded" } });
    expect((await submit("fal-ai/veo3.1", { prompt: "x" })).headers.get("x-fal-retryable")).toBe("true");
  });

  test("failure: COMPLETED with error/error_type; the result carries the status and detail", async () => {
    up.control.set({ polls: 0, fail: { code: "content_policy_violation", message: "flagged" } });
    const s = (await submit("fal-ai/veo3.1", { prompt: "x" })).json;
    expect((await get(s.status_url)).json).toMatchObject({
      status: "COMPLETED",
      error: "flagged",
      error_type: "content_policy_violation",
    });
    const r = await get(s.response_url);
    expect(r.status).toBe(422);
    expect(r.json.detail[0].type).toBe("content_policy_violation");
  });

  test("cancel, and unknown requests", async () => {
    up.control.set({ never: true });
    const s = (await submit("fal-ai/veo3.1", { prompt: "x" })).json;
    expect((await get(s.cancel_url, "PUT")).json.status).toBe("CANCELLATION_REQUESTED");
    expect((await get(s.status_url)).json.error_type).toBe("request_cancelled");
    expect((await get(s.cancel_url, "PUT")).status).toBe(400);
    expect((await get(`${up.urls.fal}/fal-ai/veo3.1/requests/nope/status`)).status).toBe(404);
  });
});

describe("Replicate predictions", () => {
  const key = { authorization: `Bearer ${up.keys.replicate}` };
  const create = (model: string, input: Record<string, unknown>, headers: Record<string, string> = {}, extra = {}) =>
    req(`${up.urls.replicate}/models/${model}/predictions`, {
      body: { input, ...extra },
      headers: { ...key, ...headers },
    });
  const get = (url: string, method = "GET") => req(url, { method, headers: key });

  test("needs the bearer token", async () => {
    expect((await req(`${up.urls.replicate}/models/a/b/predictions`, { body: { input: {} } })).status).toBe(401);
  });

  test("starting → processing → succeeded with an output array for num_outputs models", async () => {
    up.control.set({ polls: 2 });
    const p = await create("black-forest-labs/flux-schnell", { prompt: "x", num_outputs: 2 });
    expect([p.status, p.json.status, p.json.output]).toEqual([201, "starting", null]);
    expect((await get(p.json.urls.get)).json.status).toBe("starting");
    expect((await get(p.json.urls.get)).json.status).toBe("processing");
    const done = (await get(p.json.urls.get)).json;
    expect(done.status).toBe("succeeded");
    expect(done.output).toHaveLength(2);
    expect(done.metrics.predict_time).toBeGreaterThanOrEqual(0);
    expect((await fetch(done.output[0])).headers.get("content-type")).toBe("image/png");
  });

  test("single-output models give one URL; Prefer: wait answers final at once", async () => {
    const p = (await create("black-forest-labs/flux-1.1-pro", { prompt: "x" }, { prefer: "wait" })).json;
    expect(p.status).toBe("succeeded");
    expect(typeof p.output).toBe("string");
  });

  test("failed and canceled", async () => {
    up.control.once({ polls: 0, fail: { message: "NSFW content detected" } });
    const f = (await create("black-forest-labs/flux-dev", { prompt: "x" })).json;
    expect((await get(f.urls.get)).json).toMatchObject({
      status: "failed",
      error: "NSFW content detected",
      output: null,
    });
    up.control.once({ never: true });
    const c = (await create("black-forest-labs/flux-dev", { prompt: "x" })).json;
    expect((await get(c.urls.cancel, "POST")).json.status).toBe("canceled");
    expect((await get(c.urls.get)).json.status).toBe("canceled");
    expect((await get(`${up.urls.replicate}/predictions/nope`)).status).toBe(404);
  });

  test("refusal and webhook", async () => {
    up.control.once({ refuse: { status: 402, message: "You have insufficient credit" } });
    const r = await create("black-forest-labs/flux-dev", { prompt: "x" });
    expect([r.status, r.json.detail]).toEqual([402, "You have insufficient credit"]);
    const got: any[] = [];
    const hook = Bun.serve({ port: 0, fetch: async (q) => (got.push(await q.json()), new Response("ok")) });
    up.control.once({ delayMs: 20 });
    await create("black-forest-labs/flux-dev", { prompt: "x" }, {}, { webhook: `http://127.0.0.1:${hook.port}/hook` });
    await Bun.sleep(120);
    await hook.stop(true);
    expect(got).toHaveLength(1);
    expect(got[0].status).toBe("succeeded");
  });
});
