// Field names of Object.prototype's members in a task's input ("__proto__", "constructor", "toString"): they are
// unknown fields like any other. Before, "__proto__" on an alias set the validated input's prototype: pricing read
// `{ "num_images": 0 }` from it (a real image for 0 credits, on an empty wallet) while the upstream, sent the JSON
// without it, made its default. And a result that cannot be priced is charged at its estimate once, instead of being
// polled and downloaded again at every round until its deadline.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, ledgerOf, startMediaGateway } from "./support";

const gw = await startMediaGateway();
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

async function post(key: string, path: string, body: string) {
  const res = await fetch(gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  return { status: res.status, json: (await res.json()) as any };
}

const upstreamCalls = () => gw.up.requests.length;

describe("Object.prototype names as input fields", () => {
  for (const [path, model, proto] of [
    ["/v1/images/generations", "fal-ai/kling-image/o1", { num_images: 0 }],
    ["/v1/videos", "kling-3.0/video", { duration: 0 }],
    ["/v1/videos", "kling-3.0/video", { duration: -100 }],
  ] as const) {
    test(`${path}: "__proto__": ${JSON.stringify(proto)} is an unknown field (422), nothing held, nothing sent upstream`, async () => {
      const { key } = await gw.account(1000);
      const before = upstreamCalls();
      const r = await post(key, path, `{"model":"${model}","prompt":"a fox","__proto__":${JSON.stringify(proto)}}`);
      expect(r.status).toBe(422);
      expect(r.json.error).toMatchObject({ param: "__proto__" });
      expect(r.json.error.message).toContain('unknown field "__proto__"');
      expect(await client(gw, key).credits()).toMatchObject({ credits: 1000, held_credits: 0 });
      expect(upstreamCalls()).toBe(before);
    });
  }

  test("an empty wallet gets no image this way: the field is refused before the price is worked out", async () => {
    const { key } = await gw.account(0);
    const r = await post(
      key,
      "/v1/images/generations",
      `{"model":"fal-ai/kling-image/o1","prompt":"a fox","max_credits":0,"__proto__":{"num_images":0}}`,
    );
    expect(r.status).toBe(422);
  });

  test('the estimate validates like task creation: a top-level "__proto__" is an unknown field; one in `input` never prices', async () => {
    const estimate = (body: string) =>
      fetch(gw.url + "/v1/credits/estimate", { method: "POST", headers: { "content-type": "application/json" }, body });
    const top = await estimate(`{"model":"fal-ai/kling-image/o1","prompt":"a fox","__proto__":{"num_images":0}}`);
    expect(top.status).toBe(422);
    expect(((await top.json()) as any).error.message).toContain('unknown field "__proto__"');
    // Inside `input` the request's schema drops it before anything reads it: priced as sent (one image, 28 credits).
    const inner = await estimate(
      `{"model":"fal-ai/kling-image/o1","input":{"prompt":"a fox","__proto__":{"num_images":3}}}`,
    );
    expect(inner.status === 422 || ((await inner.json()) as any).estimated_credits === 28).toBe(true);
  });

  test('createTask: "__proto__" inside `input` never prices the task (dropped by the schema: one image, 28 credits)', async () => {
    const { key } = await gw.account(1000);
    const r = await post(
      key,
      "/api/v1/jobs/createTask",
      `{"model":"fal-ai/kling-image/o1","input":{"prompt":"a fox","__proto__":{"num_images":0}}}`,
    );
    if (r.json.code !== 200) return expect(r.json.code).toBe(422);
    const st = await client(gw, key).waitStatus(r.json.data.taskId);
    expect(st).toMatchObject({ status: "succeeded", credits_consumed: 28 });
  });

  for (const name of ["constructor", "toString", "hasOwnProperty"]) {
    test(`createTask: an input field "${name}" is refused by name, like any unknown field`, async () => {
      const { key } = await gw.account(1000);
      const { status, json } = await client(gw, key).createTask("google/nano-banana", { prompt: "x", [name]: "zzz" });
      expect(status).toBe(422);
      expect(json.msg).toContain(`unknown field "${name}"`);
    });
  }

  test("the same field without the prototype trick is priced as usual (28 credits an image)", async () => {
    const { key } = await gw.account(1000);
    const r = await post(
      key,
      "/v1/images/generations",
      `{"model":"fal-ai/kling-image/o1","prompt":"a fox","num_images":1}`,
    );
    expect(r.status).toBe(200);
    const st = await client(gw, key).waitStatus(r.json.task_id);
    expect(st).toMatchObject({ status: "succeeded", credits_consumed: 28 });
  });
});

describe("a result that cannot be priced", () => {
  test("is charged at its estimate once and the task succeeds, instead of being fetched again until its deadline", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    gw.up.control.set({ polls: 3 }, { model: "kling-3.0/video" });
    const downloads = () => gw.up.requests.filter((q) => q.path.startsWith("/files/")).length;
    const downloadsBefore = downloads();
    const { status, json } = await c.createTask("kling-3.0/video", { prompt: "a fox", duration: 5 });
    expect(status).toBe(200);
    const taskId = json.data.taskId;
    // The stored input loses the field its price depends on while the upstream works (a stand-in for any defect
    // that makes the result unpriceable).
    const row = await gw.ctx.db.get<{ input: string; estimate: number }>(
      sql`select input, estimate from tasks where id = ${taskId}`,
    );
    const { duration: _, ...input } = JSON.parse(row!.input);
    await gw.ctx.db.run(sql`update tasks set input = ${JSON.stringify(input)} where id = ${taskId}`);

    const rec = await c.waitRecord(taskId, 10_000);
    expect(rec.state).toBe("success");
    const { hold, entries } = await ledgerOf(gw, taskId);
    expect(hold.status).toBe("posted");
    expect(entries.map((e: any) => e.amount)).toEqual([-row!.estimate]);
    expect(downloads() - downloadsBefore).toBe(1); // fetched once, not at every poll until the deadline
  });
});
