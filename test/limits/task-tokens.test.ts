// Concurrency tokens, in process and on Redis: the limit holds under concurrent acquires, tokens of a dead process
// expire, refresh keeps a live one, release frees a slot.
import { afterAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { MemoryTaskTokens, RedisTaskTokens, type TaskTokens } from "../../src/limits/task-tokens";
import { REDIS_URL, redisAvailable, skipNote } from "../support/services";

let redis: RedisClient | undefined;
afterAll(() => redis?.close());

skipNote("Redis", redisAvailable, "Redis task tokens");
const impls: Array<[string, boolean, () => Promise<TaskTokens>]> = [
  ["memory", true, async () => new MemoryTaskTokens()],
  [
    "redis",
    redisAvailable,
    async () => {
      redis ??= new RedisClient(REDIS_URL);
      await redis.connect();
      return new RedisTaskTokens(redis, `sy-test:${crypto.randomUUID()}`);
    },
  ],
];

describe.each(impls)("%s task tokens", (_name, available, make) => {
  test.skipIf(!available)(
    "at most N at once, even when 20 acquire concurrently; re-acquiring the same task is idempotent",
    async () => {
      const t = await make();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => t.acquire("k1", `task${i}`, 2, 60_000)));
      expect(results.filter((r) => r.ok)).toHaveLength(2);
      const refused = results.find((r) => !r.ok)!;
      expect(refused.ok ? 0 : refused.retryAfterSeconds).toBeGreaterThan(0);
      const winner = results.findIndex((r) => r.ok);
      expect((await t.acquire("k1", `task${winner}`, 2, 60_000)).ok).toBe(true);
      expect(await t.count("k1")).toBe(2);
      expect((await t.acquire("k2", "other", 2, 60_000)).ok).toBe(true); // per key
    },
  );

  test.skipIf(!available)("holders lists the key's tokens with their expiry", async () => {
    const t = await make();
    const before = Date.now();
    await t.acquire("h", "a", 3, 60_000);
    await t.acquire("h", "b", 3, 60_000);
    await t.release("h", "b");
    const holders = await t.holders("h");
    expect(holders.map((h) => h.taskId)).toEqual(["a"]);
    expect(holders[0]!.expiresAt).toBeGreaterThanOrEqual(before + 60_000);
  });

  test.skipIf(!available)("release frees a slot; an unrefreshed token expires; a refreshed one lives", async () => {
    const t = await make();
    await t.acquire("k", "a", 2, 60_000);
    await t.acquire("k", "b", 2, 150);
    expect((await t.acquire("k", "c", 2, 60_000)).ok).toBe(false);
    await t.release("k", "a");
    expect((await t.acquire("k", "c", 2, 60_000)).ok).toBe(true);
    await t.refresh("k", "c", 60_000);
    await Bun.sleep(250); // b (a dead process's token) has expired
    expect(await t.count("k")).toBe(1);
    expect((await t.acquire("k", "d", 2, 60_000)).ok).toBe(true);
    expect((await t.acquire("k", "e", 2, 60_000)).ok).toBe(false);
  });
});
