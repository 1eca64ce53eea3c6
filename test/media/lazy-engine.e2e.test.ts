// A media worker loads its engine only once the database holds media work (src/media/worker.ts, pending-work.ts):
// a gateway that serves no media task keeps a small heap in its worker instead of the engine's. Its first task
// still runs to the end, and workers whose engine never started stop at once.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { mediaWorkPending, probeConnection } from "../../src/media/pending-work";
import { freshPostgres, pgAvailable, skipNote, tempSqlitePath } from "../support/services";
import { client, startMediaGateway } from "./support";

describe("a gateway with media workers", async () => {
  const gw = await startMediaGateway({ MEDIA_WORKERS: "2" });
  afterAll(() => gw.stop());

  test("runs no engine while there is no media work; its first task starts the engines and succeeds", async () => {
    expect(gw.media.mode).toBe("workers");
    await Bun.sleep(600); // three of the workers' looks for work
    expect(gw.media.engines()).toBe(0);
    const c = client(gw, (await gw.account(1000)).key);
    const { json } = await c.createTask("google/nano-banana", { prompt: "first" });
    expect((await c.waitRecord(json.data.taskId)).state).toBe("success");
    expect(gw.media.engines()).toBeGreaterThanOrEqual(1); // whichever saw the task first ran it
    expect(await c.credits()).toMatchObject({ held_credits: 0 });
  }, 20_000);
});

test("media workers whose engine never started stop at once", async () => {
  const gw = await startMediaGateway();
  await Bun.sleep(300);
  expect(gw.media.engines()).toBe(0);
  const t0 = performance.now();
  await gw.stop(); // the media workers first, then the gateway
  expect(performance.now() - t0).toBeLessThan(2000);
}, 20_000);

describe("media work pending, asked on the worker's bare connection", async () => {
  const path = tempSqlitePath();
  const db = await openDatabase(path); // the gateway's connection: migrations applied, rows written
  const probe = probeConnection(path);
  afterAll(async () => {
    await probe.close();
    await db.close();
  });
  const now = 1_800_000_000_000;
  const task = (id: string, state: string) =>
    db.run(sql`insert into tasks (id, account_id, key_id, model, state, param, input, estimate, route_index, attempts, next_poll_at, deadline_at, created_at, updated_at, results_expired)
      values (${id}, ${"acct"}, ${"key"}, ${"m"}, ${state}, ${"{}"}, ${"{}"}, ${1}, ${0}, ${0}, ${now + 3_600_000}, ${now}, ${now}, ${now}, ${0})`);
  const pending = (results = true) => mediaWorkPending(probe.exists, { results, now });

  test("ended tasks are no work; a task not yet ended is, even one not due yet", async () => {
    await task("t_done", "success");
    await task("t_failed", "fail");
    expect(await pending()).toBe(false);
    await task("t_wait", "waiting");
    expect(await pending()).toBe(true);
    await db.run(sql`update tasks set state = ${"generating"} where id = ${"t_wait"}`);
    expect(await pending()).toBe(true);
    await db.run(sql`update tasks set state = ${"success"} where id = ${"t_wait"}`);
  });

  test("a callback attempt not yet made is work (an operator's redelivery of an ended task)", async () => {
    await db.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
      values (${"cb1"}, ${"t_done"}, ${"acct"}, ${"https://example.com/h"}, ${1}, ${"delivered"}, ${now}, ${now})`);
    expect(await pending()).toBe(false);
    await db.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
      values (${"cb2"}, ${"t_done"}, ${"acct"}, ${"https://example.com/h"}, ${2}, ${"pending"}, ${now}, ${now + 60_000})`);
    expect(await pending()).toBe(true);
    await db.run(sql`update callback_deliveries set state = ${"failed"} where id = ${"cb2"}`);
  });

  test("a result file past its retention is work when results are looked at, one still kept is not", async () => {
    const file = (id: string, expiresAt: number, deletedAt: number | null) =>
      db.run(sql`insert into result_files (id, task_id, account_id, storage_key, content_type, bytes, created_at, expires_at, deleted_at)
        values (${id}, ${"t_done"}, ${"acct"}, ${id}, ${"image/png"}, ${1}, ${now}, ${expiresAt}, ${deletedAt})`);
    await file("f_kept", now + 1, null);
    await file("f_swept", now - 1, now);
    expect(await pending()).toBe(false);
    await file("f_due", now, null);
    expect(await pending()).toBe(true);
    expect(await pending(false)).toBe(false);
  });
});

skipNote("Postgres", pgAvailable, "media work pending on Postgres");
test.skipIf(!pgAvailable)("the bare connection asks the same on Postgres", async () => {
  const pg = await freshPostgres();
  const db = await openDatabase(pg.url);
  const probe = probeConnection(pg.url);
  try {
    expect(await mediaWorkPending(probe.exists, { results: true })).toBe(false);
    const now = Date.now();
    await db.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
      values (${"cb1"}, ${"t"}, ${"acct"}, ${"https://example.com/h"}, ${1}, ${"pending"}, ${now}, ${now})`);
    expect(await mediaWorkPending(probe.exists, { results: false })).toBe(true);
  } finally {
    await probe.close();
    await db.close();
    await pg.drop();
  }
});
