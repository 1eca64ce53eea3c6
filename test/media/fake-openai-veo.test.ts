import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { inflateSync } from "node:zlib";
import { mp3Bytes, mp4Bytes, mp4DurationSeconds, pngBytes, startFakeMediaUpstreams } from "../fakes/media/index";

const up = startFakeMediaUpstreams();
afterAll(() => up.stop());
beforeEach(() => up.control.reset());

async function req(url: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const res = await fetch(url, {
    method: body === undefined ? "GET" : "POST",
    signal,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

describe("OpenAI Images (synchronous)", () => {
  const key = { authorization: `Bearer ${up.keys.openai}` };
  const gen = (body: Record<string, unknown>, signal?: AbortSignal) =>
    req(`${up.urls.openai}/images/generations`, body, key, signal);

  test("needs the bearer key", async () => {
    const r = await req(`${up.urls.openai}/images/generations`, { model: "gpt-image-1", prompt: "x" });
    expect([r.status, r.json.error.code]).toEqual([401, "invalid_api_key"]);
  });

  test("returns b64_json PNGs and token usage", async () => {
    const r = await gen({ model: "gpt-image-1", prompt: "a cat", n: 2, size: "1024x1536", quality: "high" });
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(2);
    const png = Buffer.from(r.json.data[0].b64_json, "base64");
    expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join("")).toBe("PNG");
    expect(r.json.usage.output_tokens).toBe(2 * 6240);
    expect(r.json.usage.total_tokens).toBe(r.json.usage.input_tokens + r.json.usage.output_tokens);
    expect((await gen({ model: "gpt-image-1" })).json.error.param).toBe("prompt");
  });

  test("refusal, generation failure, usage override, delay", async () => {
    up.control.once({ refuse: {} });
    expect((await gen({ model: "gpt-image-1", prompt: "x" })).status).toBe(429);
    up.control.once({ fail: { message: "blocked" } });
    const f = await gen({ model: "gpt-image-1", prompt: "x" });
    expect([f.status, f.json.error.code, f.json.error.message]).toEqual([400, "moderation_blocked", "blocked"]);
    up.control.once({ usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 }, delayMs: 50 });
    const t0 = Date.now();
    expect((await gen({ model: "gpt-image-1", prompt: "x" })).json.usage).toEqual({
      input_tokens: 1,
      output_tokens: 2,
      total_tokens: 3,
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
  });

  test("never answers until the client gives up", async () => {
    up.control.once({ never: true });
    await expect(gen({ model: "gpt-image-1", prompt: "x" }, AbortSignal.timeout(100))).rejects.toThrow();
  });
});

describe("Gemini Veo (long-running operation)", () => {
  const key = { "x-goog-api-key": up.keys.veo };
  const predict = (model: string, body: unknown) =>
    req(`${up.urls.veo}/v1beta/models/${model}:predictLongRunning`, body, key);
  const poll = (name: string) => req(`${up.urls.veo}/v1beta/${name}`, undefined, key);

  test("needs x-goog-api-key", async () => {
    const r = await req(`${up.urls.veo}/v1beta/models/veo-3.1-generate-preview:predictLongRunning`, {
      instances: [{ prompt: "x" }],
    });
    expect([r.status, r.json.error.status]).toEqual([401, "UNAUTHENTICATED"]);
  });

  test("operation without `done` while running, then a video URI that downloads with the key", async () => {
    up.control.set({ polls: 1 });
    const op = (
      await predict("veo-3.1-generate-preview", {
        instances: [{ prompt: "x" }],
        parameters: { durationSeconds: 6, aspectRatio: "16:9" },
      })
    ).json;
    expect(op.name).toMatch(/^models\/veo-3\.1-generate-preview\/operations\/\w+$/);
    const running = (await poll(op.name)).json;
    expect(running).toEqual({ name: op.name });
    const done = (await poll(op.name)).json;
    expect(done.done).toBe(true);
    const uri = done.response.generateVideoResponse.generatedSamples[0].video.uri;
    expect((await fetch(uri)).status).toBe(401);
    const file = await fetch(uri, { headers: key });
    expect(file.headers.get("content-type")).toBe("video/mp4");
    expect(mp4DurationSeconds(new Uint8Array(await file.arrayBuffer()))).toBe(6);
    expect((await fetch(`${uri}&key=${up.keys.veo}`)).status).toBe(200);
  });

  test("failure is done with error{code,message}; refusal is an HTTP error; unknown operation 404", async () => {
    up.control.once({ polls: 0, fail: { message: "audio blocked" } });
    const op = (await predict("veo-3.1-fast-generate-preview", { instances: [{ prompt: "x" }] })).json;
    expect((await poll(op.name)).json).toEqual({
      name: op.name,
      done: true,
      error: { code: 13, message: "audio blocked" },
    });
    up.control.once({ refuse: {} });
    const r = await predict("veo-3.1-generate-preview", { instances: [{ prompt: "x" }] });
    expect([r.status, r.json.error.status]).toEqual([429, "RESOURCE_EXHAUSTED"]);
    expect((await predict("veo-3.1-generate-preview", { instances: [{}] })).status).toBe(400);
    expect((await poll("models/veo-3.1-generate-preview/operations/nope")).status).toBe(404);
  });
});

describe("result files", () => {
  test("the PNG is valid: CRCs check out and IDAT inflates to one RGBA pixel row", () => {
    const png = pngBytes();
    const v = new DataView(png.buffer, png.byteOffset);
    let at = 8;
    const types: string[] = [];
    while (at < png.length) {
      const len = v.getUint32(at);
      const type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
      types.push(type);
      expect(v.getUint32(at + 8 + len)).toBe(Bun.hash.crc32(png.subarray(at + 4, at + 8 + len)));
      if (type === "IDAT") expect(inflateSync(png.subarray(at + 8, at + 8 + len)).length).toBe(5);
      at += 12 + len;
    }
    expect(types).toEqual(["IHDR", "IDAT", "IEND"]);
  });

  test("the MP4 carries its duration; the MP3 has the right number of frames", () => {
    expect(mp4DurationSeconds(mp4Bytes(8))).toBe(8);
    expect(mp4DurationSeconds(mp4Bytes(5.5))).toBe(5.5);
    const mp3 = mp3Bytes(10);
    expect(mp3.length).toBe(Math.ceil((10 * 44100) / 1152) * 104);
    expect([...mp3.subarray(104, 108)]).toEqual([0xff, 0xfb, 0x10, 0xc4]);
  });

  test("every request is recorded with its provider", () => {
    const providers = new Set(up.requests.map((r) => r.provider));
    expect(providers.has("openai-images") && providers.has("veo")).toBe(true);
    expect(up.requests[0]).toMatchObject({ method: "POST", path: "/v1/images/generations" });
  });
});
