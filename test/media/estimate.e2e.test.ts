// POST /v1/credits/estimate (no key) and its promise: a task whose output matches the request is charged exactly
// the estimate; a shorter or smaller output is charged for what was produced (never more than the estimate).
import { afterAll, describe, expect, test } from "bun:test";
import { client, startMediaGateway } from "./support";

const gw = await startMediaGateway({ MEDIA_WORKERS: "0" }); // the main-thread engine (the Worker path is covered elsewhere)
afterAll(() => gw.stop());

const estimate = async (body: unknown) => {
  const res = await fetch(gw.url + "/v1/credits/estimate", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

describe("POST /v1/credits/estimate", () => {
  test("the spec's example shape, without a key or a prompt", async () => {
    const r = await estimate({
      model: "seedance-2-fast",
      modality: "video",
      duration: 6,
      resolution: "720p",
      input_mode: "text-to-video",
      max_credits: 250,
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      model: "bytedance/seedance-2-fast",
      modality: "video",
      input_mode: "text-to-video",
      estimated_credits: 990,
      estimated_usd: 0.99,
      max_credits: 250,
      within_budget: false,
      breakdown: { unit: "second", quantity: { seconds: 6 }, priced_by: { resolution: "720p" } },
    });
    expect(r.json.breakdown.input.prompt).toBeUndefined();
    expect(
      (await estimate({ model: "bytedance/seedance-2-fast", duration: 6, resolution: "480p", max_credits: 500 })).json,
    ).toMatchObject({ estimated_credits: 465, within_budget: true });
  });

  test("fields inside `input` count too; validation names the field; modality must match", async () => {
    expect(
      (await estimate({ model: "kling-3.0/video", input: { duration: 10, mode: "pro", sound: true } })).json
        .estimated_credits,
    ).toBe(1350);
    const bad = await estimate({ model: "kling-3.0/video", duration: 99 });
    expect(bad.status).toBe(422);
    expect(bad.json.error.param).toBe("duration");
    expect((await estimate({ model: "kling-3.0/video", modality: "image" })).status).toBe(422);
    expect((await estimate({ model: "nope" })).status).toBe(422);
    // Text priced per character must be given.
    const tts = await estimate({ model: "elevenlabs/text-to-speech-multilingual-v2" });
    expect(tts.status).toBe(422);
    expect(tts.json.error.param).toBe("text");
  });

  test("a max_credits too large to be an exact amount is a 422 naming it, not a 500; the largest exact one is a budget", async () => {
    for (const max_credits of [9.1e9, 1e21]) {
      const r = await estimate({ model: "kling-3.0/video", duration: 5, max_credits });
      expect(r.status).toBe(422);
      expect(r.json.error).toMatchObject({ code: "invalid_max_credits", param: "max_credits" });
      expect(r.json.error.message).toContain("at most 9007199254");
    }
    expect((await estimate({ model: "kling-3.0/video", duration: 5, max_credits: 9007199254 })).json).toMatchObject({
      max_credits: 9007199254,
      within_budget: true,
    });
  });

  test.each([
    ["google/nano-banana", { prompt: "a fox" }],
    ["kling-3.0/video", { prompt: "a fox", duration: 7, mode: "pro" }],
    ["fal-ai/sora-2/text-to-video", { prompt: "a fox", duration: 8 }],
    ["black-forest-labs/flux-schnell", { prompt: "a fox", num_outputs: 3 }],
    ["suno/v4-5", { prompt: "a song" }],
    ["gpt-image-1", { prompt: "a fox", quality: "low" }],
  ])("%s: estimate == settled cost when the output matches the request", async (model, input) => {
    const e = await estimate({ model, ...input });
    expect(e.status).toBe(200);
    const c = client(gw, (await gw.account(5000)).key);
    const id = (await c.createTask(model, input)).json.data.taskId;
    const rec = await c.waitRecord(id);
    expect(rec.state).toBe("success");
    expect(rec.creditsConsumed).toBe(e.json.estimated_credits);
    expect((await c.credits()).credits).toBe(5000 - e.json.estimated_credits);
  });

  test("a shorter video than asked is charged for its real length (read from the file)", async () => {
    const c = client(gw, (await gw.account(5000)).key);
    gw.up.control.set({ seconds: 3 }, { model: "kling-3.0/video" });
    const id = (await c.createTask("kling-3.0/video", { prompt: "x", duration: 10 })).json.data.taskId;
    const rec = await c.waitRecord(id);
    expect(rec).toMatchObject({ state: "success", estimatedCredits: 700, creditsConsumed: 210 });
    expect((await c.credits()).credits).toBe(5000 - 210);
    gw.up.control.reset();
  });

  test("fewer images than asked are charged per image delivered; upstream-reported cost is used where given", async () => {
    const c = client(gw, (await gw.account(5000)).key);
    gw.up.control.set({ count: 1 }, { provider: "replicate" });
    const id = (await c.createTask("black-forest-labs/flux-dev", { prompt: "x", num_outputs: 4 })).json.data.taskId;
    expect(await c.waitRecord(id)).toMatchObject({ estimatedCredits: 100, creditsConsumed: 25 });
    gw.up.control.set({ usage: { input_tokens: 10, output_tokens: 272 } }, { provider: "openai-images" });
    const img = (await c.createTask("gpt-image-1", { prompt: "x", quality: "medium" })).json.data.taskId;
    // 10 × $5/M + 272 × $40/M = $0.01093 → 11 credits instead of the 42 held.
    expect(await c.waitRecord(img)).toMatchObject({ estimatedCredits: 42, creditsConsumed: 11 });
    gw.up.control.reset();
  });
});
