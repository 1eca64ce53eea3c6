// A task's concurrency token is given back the moment it reaches a final state, whichever way it ends, so a key
// limited to one running task can start the next one at once instead of getting 429 until the token expires (30 s
// here). Also the housekeeping race: a task that ends while its token is being refreshed must not get it back.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { TaskTokens } from "../../src/limits/task-tokens";
import { Engine } from "../../src/media/engine";
import { directMetrics } from "../../src/media/metrics";
import { mediaSettingsOf } from "../../src/media/settings";
import { createStorage } from "../../src/media/storage";
import { client, startMediaGateway, succeedWhileReleasesRefused, waitFor } from "./support";

// The main-thread engine shares the catalog and the tokens with the routes; a 1 s deadline for the deadline path.
const gw = await startMediaGateway({ MEDIA_WORKERS: "0", MEDIA_MAX_DEADLINE_SECONDS: "1" });
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

/** A key allowed one running task. */
async function oneTaskKey() {
  const { key } = await gw.account(5000, { maxConcurrentTasks: 1 });
  return { c: client(gw, key) };
}

/** The key's next task is accepted well before a leaked token would expire (tokenTtlMs is 30 s here). */
async function expectNextTaskAccepted(c: ReturnType<typeof client>) {
  const next = await waitFor(
    async () => {
      const r = await c.createTask("z-image", { prompt: "next" });
      return r.status === 200 ? r : undefined;
    },
    2000,
    "the key's next task to be accepted",
  ).catch(() => undefined);
  expect(next?.status).toBe(200);
}

describe("the token is released on every final state", () => {
  test("every upstream refused", async () => {
    const { c } = await oneTaskKey();
    gw.up.control.set({ refuse: { status: 503, message: "down" } });
    const { json } = await c.createTask("veo-3.1-fast-generate-preview", { prompt: "x" });
    expect(await c.waitRecord(json.data.taskId)).toMatchObject({ state: "fail", failCode: "upstream_refused" });
    await expectNextTaskAccepted(c);
  });

  test("a release that fails (Redis away as the task ends) is retried until it goes through, not left to expire", async () => {
    const { c } = await oneTaskKey();
    await succeedWhileReleasesRefused(gw, c);
    await expectNextTaskAccepted(c);
  });

  test("deadline exceeded", async () => {
    const { c } = await oneTaskKey();
    gw.up.control.set({ never: true });
    const { json } = await c.createTask("google/nano-banana", { prompt: "x" });
    expect(await c.waitRecord(json.data.taskId, 10_000)).toMatchObject({
      state: "fail",
      failCode: "deadline_exceeded",
    });
    await expectNextTaskAccepted(c);
  });

  test("deadline exceeded during a synchronous call (OpenAI Images hanging): failed at the deadline, not after its 110 s timeout", async () => {
    const { c } = await oneTaskKey();
    gw.up.control.set({ never: true }, { provider: "openai-images" });
    const { json } = await c.createTask("gpt-image-1", { prompt: "x", quality: "low" });
    expect(await c.waitRecord(json.data.taskId, 5000)).toMatchObject({
      state: "fail",
      failCode: "deadline_exceeded",
      creditsConsumed: 0,
    });
    await expectNextTaskAccepted(c);
  });

  test("model no longer in the catalog", async () => {
    const { c } = await oneTaskKey();
    gw.up.control.set({ never: true });
    const id = "google/nano-banana";
    const { json } = await c.createTask(id, { prompt: "x" });
    await waitFor(async () => (await c.record(json.data.taskId)).state === "generating", 5000, "submission");
    const model = gw.ctx.catalog.media.get(id)!;
    gw.ctx.catalog.media.delete(id); // an operator's new catalog dropped it while the task ran
    try {
      expect(await c.waitRecord(json.data.taskId)).toMatchObject({ state: "fail", failCode: "model_unavailable" });
    } finally {
      gw.ctx.catalog.media.set(id, model);
    }
    await expectNextTaskAccepted(c);
  });
});

describe("housekeeping", () => {
  test("a task that ends between the read of live tasks and its token refresh does not keep a token", async () => {
    const { c } = await oneTaskKey();
    gw.up.control.set({ never: true });
    const taskId = (await c.createTask("google/nano-banana", { prompt: "x" })).json.data.taskId;
    const real = gw.ctx.taskTokens;
    // Tokens whose refresh of this task is preceded by the task ending (state final, then its token released).
    const racing: TaskTokens = {
      acquire: (k, t, limit, ttl) => real.acquire(k, t, limit, ttl),
      async refresh(k, t, ttl) {
        if (t === taskId) {
          await gw.ctx.db.run(
            sql`update tasks set state = ${"fail"}, fail_code = ${"test"}, lease_owner = ${null} where id = ${taskId}`,
          );
          await real.release(k, t);
        }
        return real.refresh(k, t, ttl);
      },
      release: (k, t) => real.release(k, t),
      holders: (k) => real.holders(k),
      count: (k) => real.count(k),
    };
    const settings = mediaSettingsOf(gw.ctx.config);
    const housekeeper = new Engine({
      db: gw.ctx.db,
      ledger: gw.ctx.ledger,
      log: gw.ctx.log,
      owner: "test-housekeeper",
      settings,
      catalog: gw.ctx.catalog,
      storage: createStorage(settings.storage),
      tokens: racing,
      webhookSecret: (id) => gw.ctx.accounts.webhookSecret(id),
      metrics: directMetrics,
    });
    await housekeeper.housekeeping();
    await expectNextTaskAccepted(c);
  });
});
