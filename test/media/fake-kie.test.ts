import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mp4DurationSeconds, startFakeMediaUpstreams } from "../fakes/media/index";

const up = startFakeMediaUpstreams();
afterAll(() => up.stop());
beforeEach(() => up.control.reset());

const auth = { authorization: `Bearer ${up.keys.kie}`, "content-type": "application/json" };
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = auth) {
  const res = await fetch(up.urls.kie + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}
const create = (model: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  call("POST", "/api/v1/jobs/createTask", { model, input, ...extra });
const record = (taskId: string) => call("GET", `/api/v1/jobs/recordInfo?taskId=${taskId}`);

describe("kie Market", () => {
  test("a bad key is code 401 inside an HTTP 200 envelope", async () => {
    const r = await call(
      "POST",
      "/api/v1/jobs/createTask",
      { model: "google/nano-banana", input: {} },
      { authorization: "Bearer nope" },
    );
    expect(r.status).toBe(200);
    expect(r.json.code).toBe(401);
  });

  test("submit → waiting → success, resultJson is a JSON string, the file downloads", async () => {
    const c = await create("google/nano-banana", { prompt: "fox", output_format: "png", image_size: "1:1" });
    expect(c.json).toMatchObject({ code: 200, msg: "success" });
    const taskId = c.json.data.taskId as string;
    const first = await record(taskId);
    expect(first.json.data).toMatchObject({
      taskId,
      model: "google/nano-banana",
      state: "waiting",
      resultJson: "",
      failCode: "",
      failMsg: "",
    });
    const done = (await record(taskId)).json.data;
    expect(done.state).toBe("success");
    expect(typeof done.resultJson).toBe("string");
    expect(JSON.parse(done.param)).toMatchObject({ model: "google/nano-banana", input: { prompt: "fox" } });
    expect(done.completeTime).toBeGreaterThanOrEqual(done.createTime);
    const { resultUrls } = JSON.parse(done.resultJson);
    expect(resultUrls).toHaveLength(1);
    const file = await fetch(resultUrls[0]);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await file.arrayBuffer()).subarray(0, 4)]).toEqual([137, 80, 78, 71]);
  });

  test("walks waiting → queuing → generating with polls: 3", async () => {
    up.control.set({ polls: 3 });
    const { taskId } = (await create("z-image", { prompt: "x" })).json.data;
    const states = [];
    for (let i = 0; i < 4; i++) states.push((await record(taskId)).json.data.state);
    expect(states).toEqual(["waiting", "queuing", "generating", "success"]);
  });

  test("unknown taskId is code 422 recordInfo is null", async () => {
    expect((await record("nope")).json).toEqual({ code: 422, msg: "recordInfo is null", data: null });
  });

  test("refusal at submit: envelope code, or a real HTTP status when asked", async () => {
    up.control.once({ refuse: { code: 402, message: "Credits insufficient" } });
    expect(await create("z-image", { prompt: "x" })).toEqual({
      status: 200,
      json: { code: 402, msg: "Credits insufficient", data: null },
    });
    up.control.once({ refuse: { code: 500, status: 503, message: "down" } });
    expect((await create("z-image", { prompt: "x" })).status).toBe(503);
    expect((await create("z-image", { prompt: "x" })).json.code).toBe(200);
  });

  test("failure during generation carries failCode and failMsg", async () => {
    up.control.set({ polls: 0, fail: { code: 501, message: "content flagged" } }, { model: "z-image" });
    const { taskId } = (await create("z-image", { prompt: "x" })).json.data;
    expect((await record(taskId)).json.data).toMatchObject({
      state: "fail",
      failCode: "501",
      failMsg: "content flagged",
      resultJson: "",
    });
  });

  test("never finishes until the test lets it", async () => {
    up.control.set({ never: true });
    const { taskId } = (await create("z-image", { prompt: "x" })).json.data;
    for (let i = 0; i < 5; i++) expect((await record(taskId)).json.data.state).not.toBe("success");
    up.control.update(taskId, { never: false, polls: 0 });
    expect((await record(taskId)).json.data.state).toBe("success");
  });

  test("reports a different duration / image count and creditsConsumed when told", async () => {
    up.control.set({ polls: 0, seconds: 7, creditsConsumed: 90 }, { model: "kling-3.0/video" });
    const { taskId } = (await create("kling-3.0/video", { prompt: "x", duration: "5" })).json.data;
    const rec = (await record(taskId)).json.data;
    expect(rec.creditsConsumed).toBe(90);
    const file = await fetch(JSON.parse(rec.resultJson).resultUrls[0]);
    expect(file.headers.get("content-type")).toBe("video/mp4");
    expect(mp4DurationSeconds(new Uint8Array(await file.arrayBuffer()))).toBe(7);
    up.control.set({ polls: 0, count: 3 }, { model: "google/imagen4-fast" });
    const img = (await create("google/imagen4-fast", { prompt: "x", num_images: "1" })).json.data;
    expect(JSON.parse((await record(img.taskId)).json.data.resultJson).resultUrls).toHaveLength(3);
  });

  test("POSTs the final record to callBackUrl (timed tasks finish on their own)", async () => {
    const got: any[] = [];
    const receiver = Bun.serve({ port: 0, fetch: async (req) => (got.push(await req.json()), new Response("ok")) });
    up.control.set({ delayMs: 30 });
    const { taskId } = (
      await create("z-image", { prompt: "x" }, { callBackUrl: `http://127.0.0.1:${receiver.port}/cb` })
    ).json.data;
    await Bun.sleep(150);
    await receiver.stop(true);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ code: 200, data: { taskId, state: "success" } });
    expect(up.control.callbacks.at(-1)).toMatchObject({ status: 200 });
  });
});

describe("kie Suno API", () => {
  const generate = (body: Record<string, unknown>) =>
    call("POST", "/api/v1/generate", {
      customMode: false,
      instrumental: false,
      model: "V5",
      callBackUrl: "http://127.0.0.1:9/cb",
      ...body,
    });
  const info = (taskId: string) => call("GET", `/api/v1/generate/record-info?taskId=${taskId}`);

  test("checks its required fields", async () => {
    expect((await generate({ prompt: "x", model: "V9" })).json.code).toBe(422);
    expect((await generate({ prompt: "x", callBackUrl: undefined })).json).toMatchObject({
      code: 422,
      msg: "callBackUrl is required",
    });
    expect((await generate({ customMode: true, prompt: "la la" })).json.code).toBe(422);
  });

  test("PENDING → TEXT_SUCCESS → FIRST_SUCCESS → SUCCESS with two downloadable tracks", async () => {
    up.control.set({ polls: 3, seconds: 12 });
    const { taskId } = (await generate({ prompt: "a calm piano piece" })).json.data;
    const statuses = [];
    let last: any;
    for (let i = 0; i < 4; i++) statuses.push((last = (await info(taskId)).json.data).status);
    expect(statuses).toEqual(["PENDING", "TEXT_SUCCESS", "FIRST_SUCCESS", "SUCCESS"]);
    const tracks = last.response.sunoData;
    expect(tracks).toHaveLength(2);
    expect(tracks[0].duration).toBe(12);
    const file = await fetch(tracks[1].audioUrl);
    expect(file.headers.get("content-type")).toBe("audio/mpeg");
    expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect(up.requests.filter((r) => r.provider === "kie-suno").length).toBeGreaterThanOrEqual(5);
  });

  test("fails with a Suno failure status", async () => {
    up.control.set({ polls: 0, fail: { code: "SENSITIVE_WORD_ERROR", message: "bad words" } });
    const { taskId } = (await generate({ prompt: "x" })).json.data;
    expect((await info(taskId)).json.data).toMatchObject({
      status: "SENSITIVE_WORD_ERROR",
      errorMessage: "bad words",
      response: null,
    });
    expect((await info("nope")).json.code).toBe(422);
  });
});
