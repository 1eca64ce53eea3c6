// A key's media slot is never lost to a fault: an error after the token was taken gives it back, a token left
// behind by a timed-out acquire or a lost release is reconciled against the tasks table at the next refused acquire,
// and a release that fails never replaces the error the caller should see. In process and on the real Redis, on
// SQLite and on Postgres.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { sql } from "drizzle-orm";
import { RedisUnavailableError } from "../../src/limits/redis-connection";
import { TaskService } from "../../src/media/service";
import { mediaSettingsOf } from "../../src/media/settings";
import { freshPostgres, pgAvailable, REDIS_URL, redisAvailable, skipNote } from "../support/services";
import { client, startMediaGateway, succeedWhileReleasesRefused, waitFor, type MediaGateway } from "./support";

skipNote("Redis", redisAvailable, "task token faults on Redis");
skipNote("Postgres", pgAvailable, "task token faults on Postgres");
const gateways: MediaGateway[] = [];
const drops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.stop();
  for (const d of drops.splice(0)) await d();
});

const kinds: Array<[string, boolean, Record<string, string>, boolean]> = [
  ["in-process tokens, SQLite", true, {}, false],
  ["Redis tokens, SQLite", redisAvailable, { REDIS_URL }, false],
  ["Redis tokens, Postgres", redisAvailable && pgAvailable, { REDIS_URL }, true],
];

describe.each(kinds)("%s", (_name, available, env, pg) => {
  async function setup() {
    const db = pg ? await freshPostgres() : undefined;
    if (db) drops.push(db.drop);
    // The engine only moves when a test ticks it.
    const gw = await startMediaGateway(
      { MEDIA_WORKERS: "0", ...env, ...(db ? { DATABASE_URL: db.url, DATABASE_POOL_SIZE: "4" } : {}) },
      { autostart: false },
    );
    gateways.push(gw);
    return gw;
  }

  /** A key allowed one running task. */
  async function oneTaskKey(gw: MediaGateway, credits = 5000) {
    const { key, keyId, accountId } = await gw.account(credits, { maxConcurrentTasks: 1 });
    return { c: client(gw, key), key, keyId, accountId };
  }

  /** The key's next task is accepted (a leaked token would refuse it with 429 for its whole TTL, 30 s here). */
  async function expectNextTaskAccepted(c: ReturnType<typeof client>) {
    const next = await c.createTask("z-image", { prompt: "next" });
    expect(next.status).toBe(200);
  }

  test.skipIf(!available)(
    "an error after the token was taken (a record that cannot be serialised, as a body nested 200,000 deep was) gives the key's slot back",
    async () => {
      const gw = await setup();
      const { c, keyId, accountId } = await oneTaskKey(gw);
      const tasks = new TaskService(gw.ctx, mediaSettingsOf(gw.ctx.config));
      const param: Record<string, unknown> = {};
      param.self = param;
      const create = tasks.create(
        { keyId, accountId, maxConcurrentTasks: 1, models: null, budget: {} },
        {
          model: "z-image",
          input: { prompt: "x" },
          param,
          names: { callback: "callBackUrl", inputPrefix: "input." },
        },
      );
      await expect(create).rejects.toThrow();
      expect(await gw.ctx.taskTokens.count(keyId)).toBe(0);
      await expectNextTaskAccepted(c);
    },
  );

  test.skipIf(!available)(
    "a release that fails in createTask's error path leaves the caller its real error (402), and is retried later",
    async () => {
      const gw = await setup();
      const { c, keyId } = await oneTaskKey(gw, 0);
      const tokens = gw.ctx.taskTokens;
      const release = tokens.release;
      tokens.release = async () => {
        throw new RedisUnavailableError("Redis did not answer within 1000 ms");
      };
      try {
        const first = await c.createTask("z-image", { prompt: "x" });
        expect(first.status).toBe(402);
        expect(first.json.code).toBe(402);
      } finally {
        tokens.release = release;
      }
      // The next call gives the first one's token back before it takes its own: refused for the credits, not for a slot.
      const second = await c.createTask("z-image", { prompt: "x" });
      expect(second.status).toBe(402);
      expect(await tokens.count(keyId)).toBe(0);
    },
  );

  test.skipIf(!available)(
    "a phantom token (an acquire that timed out client-side yet ran, 15 s ago) is dropped at the next acquire",
    async () => {
      const gw = await setup();
      const { c, keyId } = await oneTaskKey(gw);
      const ttl = 30_000; // tokenTtlMs here
      setSystemTime(new Date(Date.now() - 15_000));
      try {
        expect((await gw.ctx.taskTokens.acquire(keyId, "task_never_created", 1, ttl)).ok).toBe(true);
      } finally {
        setSystemTime();
      }
      await expectNextTaskAccepted(c);
      expect(await gw.ctx.taskTokens.count(keyId)).toBe(1); // the new task's token only
    },
  );

  test.skipIf(!available)(
    "a token taken a moment ago for a task not yet recorded (a creation in flight) is kept",
    async () => {
      const gw = await setup();
      const { c, keyId } = await oneTaskKey(gw);
      expect((await gw.ctx.taskTokens.acquire(keyId, "task_being_created", 1, 30_000)).ok).toBe(true);
      expect((await c.createTask("z-image", { prompt: "x" })).status).toBe(429);
    },
  );

  test.skipIf(!available)(
    "a creation of this process held up past the grace (between its token and its row) keeps its token: the key's next task is refused, not run beside it",
    async () => {
      const gw = await setup();
      const { c, keyId } = await oneTaskKey(gw);
      const tokens = gw.ctx.taskTokens;
      const acquire = tokens.acquire;
      let taken!: () => void;
      const tokenTaken = new Promise<void>((r) => (taken = r));
      let proceed!: () => void;
      const heldUp = new Promise<void>((r) => (proceed = r));
      // The first creation takes its token, then waits (a database held up by another session) before its row.
      tokens.acquire = async (...args) => {
        tokens.acquire = acquire;
        const r = await acquire.apply(tokens, args);
        taken();
        await heldUp;
        return r;
      };
      const slow = c.createTask("z-image", { prompt: "slow" });
      let second: Awaited<ReturnType<typeof c.createTask>>;
      try {
        await tokenTaken;
        setSystemTime(new Date(Date.now() + 15_000)); // it has been under way for 15 s
        second = await c.createTask("z-image", { prompt: "second" });
      } finally {
        setSystemTime();
        proceed();
      }
      expect((await slow).status).toBe(200);
      expect(second.status).toBe(429);
      expect(await tokens.count(keyId)).toBe(1);
    },
  );

  test.skipIf(!available)(
    "the token of a task that ended while its release was lost (the process died) is dropped at the next acquire",
    async () => {
      const gw = await setup();
      const { c } = await oneTaskKey(gw);
      const tokens = gw.ctx.taskTokens;
      const engine = gw.media.engine!;
      const release = tokens.release;
      tokens.release = async () => {
        throw new RedisUnavailableError("Redis is not connected");
      };
      let taskId: string;
      try {
        taskId = (await c.createTask("z-image", { prompt: "x" })).json.data.taskId;
        await waitFor(
          async () => {
            await engine.tick();
            await engine.drain();
            return (await c.record(taskId)).state === "success";
          },
          10_000,
          "the task to succeed",
        );
      } finally {
        tokens.release = release; // the engine that queued the release is gone: nobody retries it
      }
      const row = await gw.ctx.db.get<{ state: string }>(sql`select state from tasks where id = ${taskId!}`);
      expect(row?.state).toBe("success");
      await expectNextTaskAccepted(c);
    },
  );
});

// With Bun Workers the engine's releases are carried out by the main thread; one refused there is retried too.
test("a release refused on the main thread for a media worker is retried, not only logged", async () => {
  const gw = await startMediaGateway({ MEDIA_WORKERS: "1" });
  gateways.push(gw);
  const { key, keyId } = await gw.account(5000, { maxConcurrentTasks: 1 });
  const c = client(gw, key);
  await succeedWhileReleasesRefused(gw, c);
  await waitFor(async () => (await gw.ctx.taskTokens.count(keyId)) === 0, 5000, "the token to be given back");
});
