// A key's media slot is never lost to a fault: an error after the token was taken gives it back, a token left
// behind by a timed-out acquire or a lost release is reconciled against the tasks table at the next refused acquire,
// and a release that fails never replaces the error the caller should see. In process and on the real Redis.
import { afterAll, describe, expect, setSystemTime, test } from "bun:test";
import { sql } from "drizzle-orm";
import { RedisUnavailableError } from "../../src/limits/redis-connection";
import { TaskService } from "../../src/media/service";
import { mediaSettingsOf } from "../../src/media/settings";
import { REDIS_URL, redisAvailable, skipNote } from "../support/services";
import { client, startMediaGateway, waitFor, type MediaGateway } from "./support";

skipNote("Redis", redisAvailable, "task token faults on Redis");
const gateways: MediaGateway[] = [];
afterAll(async () => {
  for (const g of gateways) await g.stop();
});

const kinds: Array<[string, boolean, Record<string, string>]> = [
  ["in-process", true, {}],
  ["redis", redisAvailable, { REDIS_URL }],
];

describe.each(kinds)("%s tokens", (_name, available, env) => {
  async function setup() {
    // The engine only moves when a test ticks it.
    const gw = await startMediaGateway({ MEDIA_WORKERS: "0", ...env }, { autostart: false });
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

  test.skipIf(!available)("an error after the token was taken (a body nested 200,000 deep) gives the key's slot back", async () => {
    const gw = await setup();
    const { c, key, keyId } = await oneTaskKey(gw);
    const deep = "[".repeat(200_000) + "]".repeat(200_000);
    const res = await fetch(gw.url + "/api/v1/jobs/createTask", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: `{"model":"z-image","input":{"prompt":"x"},"extra":${deep}}`,
    });
    expect(res.status).not.toBe(200);
    expect(await gw.ctx.taskTokens.count(keyId)).toBe(0);
    await expectNextTaskAccepted(c);
  });

  test.skipIf(!available)("an error after the token was taken (a record that cannot be serialised) gives the key's slot back", async () => {
    const gw = await setup();
    const { c, keyId, accountId } = await oneTaskKey(gw);
    const tasks = new TaskService(gw.ctx, mediaSettingsOf(gw.ctx.config));
    const param: Record<string, unknown> = {};
    param.self = param;
    const create = tasks.create({ keyId, accountId, maxConcurrentTasks: 1 }, {
      model: "z-image", input: { prompt: "x" }, param, names: { callback: "callBackUrl", inputPrefix: "input." },
    });
    await expect(create).rejects.toThrow();
    expect(await gw.ctx.taskTokens.count(keyId)).toBe(0);
    await expectNextTaskAccepted(c);
  });
});
