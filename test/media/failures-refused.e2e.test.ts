// Refused before anything exists: budget, validation, credit and concurrency refusals leave no task and no hold and
// send nothing upstream; another account's task is not found.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, startMediaGateway, waitFor } from "./support";

const gw = await startMediaGateway();
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

const taskCount = async () => (await gw.ctx.db.get<{ n: number }>(sql`select count(*) as n from tasks`))!.n;
const holdCount = async () => (await gw.ctx.db.get<{ n: number }>(sql`select count(*) as n from holds`))!.n;

describe("refused before anything exists", () => {
  test("max_credits below the estimate: 402 max_credits_exceeded, no task, no hold, no upstream call", async () => {
    const { key } = await gw.account(5000);
    const c = client(gw, key);
    const [tasks, holds, reqs] = [await taskCount(), await holdCount(), gw.up.requests.length];
    const a = await c.call("POST", "/v1/videos", {
      model: "kling-3.0/video",
      prompt: "x",
      duration: 10,
      max_credits: 699,
    });
    expect(a.status).toBe(402);
    expect(a.json.error.code).toBe("max_credits_exceeded");
    const n = await c.createTask("kling-3.0/video", { prompt: "x", duration: 10 }, { max_credits: 100 });
    expect(n.status).toBe(402);
    expect(n.json).toMatchObject({ code: 402, data: null });
    expect([await taskCount(), await holdCount(), gw.up.requests.length]).toEqual([tasks, holds, reqs]);
    // Exactly the estimate passes.
    const ok = await c.call("POST", "/v1/videos", {
      model: "kling-3.0/video",
      prompt: "x",
      duration: 10,
      max_credits: 700,
    });
    expect(ok.status).toBe(200);
    await c.waitStatus(ok.json.task_id); // so its upstream traffic is over before the next test counts requests
  });

  test("max_credits too large to be an exact amount, or finer than 6 decimals: 422 naming max_credits on both front doors, never a 500, nothing created", async () => {
    const { key } = await gw.account(5000);
    const c = client(gw, key);
    const [tasks, holds, reqs] = [await taskCount(), await holdCount(), gw.up.requests.length];
    // 0.1234567: rounding it would change the caller's budget; the LLM endpoints refuse it too (one rule, units.ts).
    for (const max_credits of [9.1e9, 1e21, 0.1234567]) {
      const native = await c.createTask("z-image", { prompt: "x" }, { max_credits });
      expect(native.status).toBe(422);
      expect(native.json).toMatchObject({ code: 422, data: null });
      expect(native.json.msg).toContain("max_credits");
      const alias = await c.call("POST", "/v1/images/generations", { model: "z-image", prompt: "x", max_credits });
      expect(alias.status).toBe(422);
      expect(alias.json.error).toMatchObject({ code: "invalid_max_credits", param: "max_credits" });
    }
    expect([await taskCount(), await holdCount(), gw.up.requests.length]).toEqual([tasks, holds, reqs]);
  });

  test("max_credits as a decimal string is a budget on every media front door (as on the LLM endpoints); null is none", async () => {
    const { key } = await gw.account(5000);
    const c = client(gw, key);
    const [tasks, holds] = [await taskCount(), await holdCount()];
    const native = await c.createTask("kling-3.0/video", { prompt: "x", duration: 10 }, { max_credits: "699.5" });
    expect(native.status).toBe(402);
    expect(native.json.msg).toContain("above max_credits 699.5");
    const alias = await c.call("POST", "/v1/videos", {
      model: "kling-3.0/video",
      prompt: "x",
      duration: 10,
      max_credits: "699",
    });
    expect(alias.json.error).toMatchObject({ code: "max_credits_exceeded" });
    const estimate = await c.call("POST", "/v1/credits/estimate", {
      model: "kling-3.0/video",
      duration: 10,
      max_credits: "700",
    });
    expect(estimate.json).toMatchObject({ estimated_credits: 700, max_credits: 700, within_budget: true });
    const bad = await c.call("POST", "/v1/images/generations", { model: "z-image", prompt: "x", max_credits: "12abc" });
    expect([bad.status, bad.json.error.code]).toEqual([422, "invalid_max_credits"]);
    expect([await taskCount(), await holdCount()]).toEqual([tasks, holds]);
    const none = await c.createTask("z-image", { prompt: "x" }, { max_credits: null });
    expect(none.status).toBe(200);
    await c.waitStatus(none.json.data.taskId);
  });

  test("a model on the wrong front door is pointed to the right one, nothing created", async () => {
    const { key } = await gw.account(5000);
    const c = client(gw, key);
    const [tasks, holds, reqs] = [await taskCount(), await holdCount(), gw.up.requests.length];
    const video = await c.call("POST", "/v1/images/generations", {
      model: "kling-3.0/video",
      prompt: "fox",
      duration: 5,
    });
    expect(video.status).toBe(422);
    expect(video.json.error).toMatchObject({ code: "wrong_endpoint", param: "model" });
    expect(video.json.error.message).toContain("POST /v1/videos");
    const image = await c.call("POST", "/v1/music/generations", { model: "z-image", prompt: "x" });
    expect(image.json.error.message).toContain("POST /v1/images/generations");
    const llm = await c.createTask("gpt-5.2", { prompt: "x" });
    expect(llm.status).toBe(422);
    expect(llm.json.msg).toContain("POST /v1/chat/completions");
    expect([await taskCount(), await holdCount(), gw.up.requests.length]).toEqual([tasks, holds, reqs]);
  });

  test("validation: 422 naming the field, nothing held or sent", async () => {
    const { key } = await gw.account(100);
    const c = client(gw, key);
    const [holds, reqs] = [await holdCount(), gw.up.requests.length];
    const bad = await c.createTask("kling-3.0/video", { prompt: "x", duration: 99 });
    expect(bad.status).toBe(422);
    expect(bad.json.code).toBe(422);
    expect(bad.json.msg).toContain("input.duration");
    const typo = await c.call("POST", "/v1/videos", { model: "kling-3.0/video", prompt: "x", resolutoin: "720p" });
    expect(typo.status).toBe(422);
    expect(typo.json.error.param).toBe("resolutoin");
    const unknown = await c.createTask("no/such-model", { prompt: "x" });
    expect(unknown.status).toBe(422);
    expect(unknown.json.msg).toContain("no/such-model");
    const missing = await c.call("POST", "/api/v1/jobs/createTask", { input: {} });
    expect(missing.status).toBe(422);
    expect([await holdCount(), gw.up.requests.length]).toEqual([holds, reqs]);
  });

  test("insufficient credits: 402 insufficient_credits, no task", async () => {
    const { key } = await gw.account(10);
    const c = client(gw, key);
    const tasks = await taskCount();
    const r = await c.createTask("kling-3.0/video", { prompt: "x" });
    expect(r.status).toBe(402);
    expect(r.json.error_code).toBe("insufficient_credits");
    expect(await taskCount()).toBe(tasks);
    // The token taken for it was given back: the key can still start its two tasks.
    expect((await c.createTask("z-image", { prompt: "x" })).status).toBe(200);
    expect((await c.createTask("z-image", { prompt: "x" })).status).toBe(200);
  });

  test("the 3rd concurrent task on a default key gets 429 with retry-after, nothing held; a finished task frees a slot", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    gw.up.control.set({ never: true });
    const t1 = (await c.createTask("google/nano-banana", { prompt: "1" })).json.data.taskId;
    const t2 = (await c.call("POST", "/v1/images/generations", { model: "google/nano-banana", prompt: "2" })).json
      .task_id;
    const holds = await holdCount();
    const third = await c.createTask("google/nano-banana", { prompt: "3" });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(third.json.code).toBe(429);
    const alias = await c.call("POST", "/v1/images/generations", { model: "google/nano-banana", prompt: "3" });
    expect(alias.status).toBe(429);
    expect(await holdCount()).toBe(holds);
    expect((await c.credits()).held_credits).toBe(40);
    // A per-key override allows more.
    const roomy = client(gw, (await gw.account(1000, { maxConcurrentTasks: 3 })).key);
    for (let i = 0; i < 3; i++)
      expect((await roomy.createTask("google/nano-banana", { prompt: "x" })).status).toBe(200);
    expect((await roomy.createTask("google/nano-banana", { prompt: "x" })).status).toBe(429);
    // Let t1 finish: its token is released and a new task is accepted.
    const fake = await waitFor(
      () => [...gw.up.control.tasks.values()].find((t) => (t.input as any).prompt === "1"),
      5000,
      "submission",
    );
    gw.up.control.update(fake.id, { never: false, polls: 0 });
    await c.waitRecord(t1);
    await waitFor(
      async () => (await c.createTask("google/nano-banana", { prompt: "4" })).status === 200,
      5000,
      "a free slot",
    );
    expect(t2).toBeString();
  });

  test("another account's task is not found on both front doors", async () => {
    const a = client(gw, (await gw.account(100)).key);
    const b = client(gw, (await gw.account(100)).key);
    const id = (await a.createTask("z-image", { prompt: "x" })).json.data.taskId;
    const r = await b.call("GET", `/api/v1/jobs/recordInfo?taskId=${id}`);
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ code: 404, data: null });
    expect((await b.call("GET", `/v1/tasks/${id}`)).status).toBe(404);
    expect((await a.call("GET", `/v1/tasks/${id}`)).status).toBe(200);
  });
});
