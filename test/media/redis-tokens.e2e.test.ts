// With REDIS_URL, concurrency tokens are shared: two gateway processes (here: two app instances on one database
// and one Redis) together let a default key run 2 tasks, and refuse the 3rd with 429 on either.
import { afterAll, describe, expect, test } from "bun:test";
import { startFakeMediaUpstreams } from "../fakes/media/index";
import { startGateway, type TestGateway } from "../support/gateway";
import { REDIS_URL, redisAvailable, skipNote, tempSqlitePath } from "../support/services";
import { client, FAST_ENV } from "./support";

skipNote("Redis", redisAvailable, "task tokens shared through Redis");
const up = startFakeMediaUpstreams();
const gws: TestGateway[] = [];
afterAll(async () => {
  for (const g of gws) await g.stop();
  await up.stop();
});

describe.skipIf(!redisAvailable)("task tokens on Redis", () => {
  test("the 3rd concurrent task of a key is refused on whichever process it reaches", async () => {
    const env = { ...up.env, ...FAST_ENV, DATABASE_URL: tempSqlitePath(), REDIS_URL };
    const a = await startGateway(env);
    gws.push(a);
    const b = await startGateway(env);
    gws.push(b);
    const { key } = await a.account(1000);
    // No engine runs here: the tasks stay unfinished, so their tokens stay taken.
    expect((await client(a, key).createTask("z-image", { prompt: "1" })).status).toBe(200);
    expect((await client(b, key).createTask("z-image", { prompt: "2" })).status).toBe(200);
    const third = await client(a, key).createTask("z-image", { prompt: "3" });
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBeTruthy();
    expect((await client(b, key).createTask("z-image", { prompt: "3" })).status).toBe(429);
  });
});
