// Another connection holding a SQLite file's write lock (a media worker's commit, another instance on the same
// file, an operator's sqlite3 session or backup) is waited for by awaiting (src/db/sqlite-busy.ts): the gateway's
// event loop goes on serving meanwhile. SQLite's own busy handler slept inside the call and froze it.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { BUSY_WAIT_MS } from "../../src/db/sqlite-busy";
import { ADMIN_TOKEN } from "../support/gateway";
import { spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";

// These tests start processes and wait out locks (seconds on a busy machine); the preload's setDefaultTimeout
// reaches only the first file of a full run (oven-sh/bun#43787), so the file sets it again.
setDefaultTimeout(30_000);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Another process takes the write lock on `path` and keeps it until `release()`; resolves once it holds it. */
async function lockedElsewhere(path: string) {
  const script = `
    import { Database } from "bun:sqlite";
    const db = new Database(${JSON.stringify(path)});
    db.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE");
    console.log("locked");
    await Bun.stdin.text(); // until the test closes our stdin
    db.exec("COMMIT");
  `;
  const p = Bun.spawn(["bun", "-e", script], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  cleanups.push(() => p.kill());
  const reader = p.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toContain("locked");
  return {
    async release() {
      p.stdin.end();
      await p.exited;
    },
  };
}

/**
 * Starts `work` while the lock is held and lets timers run for `ms`: a write that waits by awaiting is still
 * pending then; one that blocked the event loop (SQLite's busy handler) has ended, with SQLITE_BUSY, before any
 * timer could fire. Wall-clock stalls are not measured: on a busy machine the loop stands still for other reasons.
 */
async function stillWaitingAfter<T>(ms: number, work: () => Promise<T>) {
  const started = performance.now();
  let ended = false;
  const result = work().finally(() => (ended = true));
  result.catch(() => {});
  await Bun.sleep(ms);
  return { waiting: !ended, result, started };
}

test("a write waits for a lock held elsewhere without stopping the event loop, then goes through", async () => {
  const path = tempSqlitePath();
  const db = await openDatabase(path);
  cleanups.push(() => db.close());
  await db.run(sql`create table probe (id integer primary key, v text)`);
  let lock = await lockedElsewhere(path);
  const tx = await stillWaitingAfter(200, () =>
    db.tx(function* (q) {
      yield* q.run(sql`insert into probe (v) values ('in a transaction')`);
      return yield* q.get<{ n: number }>(sql`select count(*) as n from probe`);
    }),
  );
  expect(tx.waiting).toBe(true); // timers fired while it waited for the lock
  await lock.release();
  expect(await tx.result).toEqual({ n: 1 }); // then it went through
  lock = await lockedElsewhere(path);
  const single = await stillWaitingAfter(200, () => db.run(sql`insert into probe (v) values ('on its own')`));
  expect(single.waiting).toBe(true);
  await lock.release();
  expect(await single.result).toBe(1);
});

test(`a lock held past ${BUSY_WAIT_MS / 1000} s: the write fails with SQLITE_BUSY, as before`, async () => {
  const path = tempSqlitePath();
  const db = await openDatabase(path);
  cleanups.push(() => db.close());
  await db.run(sql`create table probe (id integer primary key)`);
  const lock = await lockedElsewhere(path);
  const { waiting, result, started } = await stillWaitingAfter(200, () =>
    db.run(sql`insert into probe default values`).catch((e) => e),
  );
  expect(waiting).toBe(true);
  expect(((await result) as { code?: string }).code).toBe("SQLITE_BUSY");
  expect(performance.now() - started).toBeGreaterThanOrEqual(BUSY_WAIT_MS - 50);
  await lock.release();
}, 15_000);

test("a gateway process answers other requests while an admin write waits for the lock", async () => {
  const path = tempSqlitePath();
  const gw = await spawnGateway({ DATABASE_URL: path, ADMIN_TOKEN });
  cleanups.push(() => gw.stop());
  const lock = await lockedElsewhere(path);
  let created = false;
  const creating = fetch(gw.url + "/admin/v1/accounts", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "during a lock", credits: 5 }),
  }).finally(() => (created = true));
  await Bun.sleep(200); // the write is waiting for the lock now (it waits as long as the lock is held)
  for (let i = 0; i < 5; i++) {
    expect((await fetch(gw.url + "/healthz")).status).toBe(200);
    // A gateway whose loop stood still in SQLite's busy handler answered nothing until the write gave up.
    expect(created).toBe(false);
  }
  await lock.release();
  expect((await creating).status).toBe(201);
});
