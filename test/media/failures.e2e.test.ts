// Money on the unhappy paths: every failure refunds in full, refusals fail over to the next route, and the charge is
// capped at the estimate held. Refusals before anything is held or sent are in failures-refused.e2e.test.ts.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, ledgerOf, startMediaGateway, startReceiver, waitFor } from "./support";

const gw = await startMediaGateway();
const hook = startReceiver();
afterAll(async () => {
  await gw.stop();
  hook.stop();
});
beforeEach(() => gw.up.control.reset());

async function expectRefunded(taskId: string) {
  const { hold, entries } = await ledgerOf(gw, taskId);
  expect(hold.status).toBe("voided");
  expect(entries).toEqual([]);
}

describe("failures refund in full", () => {
  test("upstream fails during generation → fail, hold released, callback says so", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    gw.up.control.set({ fail: { message: "nsfw content", code: "content_policy_violation" } }, { provider: "fal" });
    const { json } = await c.createTask("fal-ai/kling-image/o1", { prompt: "x" }, { callBackUrl: hook.url });
    const rec = await c.waitRecord(json.data.taskId);
    const failMsg = "The upstream (fal) failed the task (generation error); nothing was charged.";
    expect(rec).toMatchObject({
      state: "fail",
      failCode: "content_policy_violation",
      failMsg,
      creditsConsumed: 0,
      resultJson: "",
    });
    await expectRefunded(json.data.taskId);
    expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
    const cb = await waitFor(() => hook.received.find((r) => r.body?.taskId === json.data.taskId), 5000, "callback");
    expect(cb.body.state).toBe("fail");
    const st = (await c.call("GET", `/v1/tasks/${json.data.taskId}`)).json;
    expect(st).toMatchObject({
      status: "failed",
      error: { code: "content_policy_violation", message: failMsg },
      credits_consumed: 0,
    });
  });

  test("every route refuses the submission → fail upstream_refused, refunded", async () => {
    const { key } = await gw.account(2000);
    const c = client(gw, key);
    gw.up.control.set({ refuse: { status: 429, message: "quota" } }, { provider: "veo" });
    gw.up.control.set({ refuse: { status: 503, message: "down" } }, { provider: "fal" });
    const { json } = await c.createTask("veo-3.1-fast-generate-preview", { prompt: "x" });
    const rec = await c.waitRecord(json.data.taskId);
    expect(rec.state).toBe("fail");
    expect(rec.failCode).toBe("upstream_refused");
    expect(rec.failMsg).toContain("veo: HTTP 4xx");
    expect(rec.failMsg).toContain("fal: HTTP 5xx");
    await expectRefunded(json.data.taskId);
    expect((await c.credits()).credits).toBe(2000);
  });

  test("the first route refuses → the second route serves the task", async () => {
    const { key } = await gw.account(2000);
    const c = client(gw, key);
    gw.up.control.set({ refuse: { status: 429, message: "quota" } }, { provider: "veo" });
    const before = gw.up.requests.length;
    const { json } = await c.createTask("veo-3.1-fast-generate-preview", { prompt: "x", duration: 8 });
    const rec = await c.waitRecord(json.data.taskId);
    expect(rec).toMatchObject({ state: "success", creditsConsumed: 1200 });
    const seen = gw.up.requests
      .slice(before)
      .filter((r) => r.method === "POST")
      .map((r) => r.provider);
    expect(seen).toEqual(["veo", "fal"]);
    const fal = gw.up.requests.slice(before).find((r) => r.provider === "fal" && r.method === "POST")!;
    expect(fal.path).toBe("/fal-ai/veo3.1/fast");
    expect((fal.body as any).duration).toBe("8s"); // the route's wire template
    const row = await gw.ctx.db.get<any>(sql`select provider, route_index from tasks where id = ${json.data.taskId}`);
    expect(row).toEqual({ provider: "fal", route_index: 1 });
  });

  test("an upstream that never finishes fails at the deadline and is refunded", async () => {
    const short = await startMediaGateway({ MEDIA_MAX_DEADLINE_SECONDS: "1" });
    try {
      const { key } = await short.account(1000);
      const c = client(short, key);
      short.up.control.set({ never: true });
      const { json } = await c.createTask("google/nano-banana", { prompt: "x" });
      const rec = await c.waitRecord(json.data.taskId, 10_000);
      expect(rec).toMatchObject({ state: "fail", failCode: "deadline_exceeded", creditsConsumed: 0 });
      const { hold, entries } = await ledgerOf(short, json.data.taskId);
      expect(hold.status).toBe("voided");
      expect(entries).toEqual([]);
      expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
    } finally {
      await short.stop();
    }
  });
});

describe("the charge is capped at the estimate held at creation", () => {
  test("prices raised while the task ran (its estimate stands for the old price): charged the estimate, not the new price", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    const { json } = await c.createTask("google/nano-banana", { prompt: `priced at creation ${crypto.randomUUID()}` });
    const id = json.data.taskId;
    const fake = await waitFor(
      () => [...gw.up.control.tasks.values()].find((t) => (t.input as any).prompt?.startsWith("priced at creation")),
      5000,
      "submission",
    );
    gw.up.control.update(fake.id, { never: true });
    const row = await gw.ctx.db.get<{ estimate: number }>(sql`select estimate from tasks where id = ${id}`);
    const atCreation = row!.estimate - 1_000_000; // one credit less than today's catalog price
    await gw.ctx.db.run(sql`update tasks set estimate = ${atCreation} where id = ${id}`);
    gw.up.control.update(fake.id, { never: false, polls: 0 });
    const rec = await c.waitRecord(id);
    expect(rec).toMatchObject({ state: "success", creditsConsumed: atCreation / 1_000_000 });
    const { hold, entries } = await ledgerOf(gw, id);
    expect(hold.status).toBe("posted");
    expect(entries.map((e: any) => Number(e.amount))).toEqual([-atCreation]);
  });
});

test("OpenAI Images answering without an image: the task fails as no_output and is refunded, not a success with no files", async () => {
  const { key } = await gw.account(1000);
  const c = client(gw, key);
  gw.up.control.set({ count: 0 }, { provider: "openai-images" });
  const { json } = await c.createTask("gpt-image-1", { prompt: "nothing comes back" });
  const rec = await c.waitRecord(json.data.taskId);
  expect(rec).toMatchObject({ state: "fail", failCode: "no_output", creditsConsumed: 0 });
  await expectRefunded(json.data.taskId);
  expect((await c.credits()).credits).toBe(1000);
});
