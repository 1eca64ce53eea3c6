// Another connection holding a SQLite file's write lock (a media worker's commit, another instance on the same
// file, an operator's sqlite3 session or backup) is waited for by awaiting (src/db/sqlite-busy.ts): the gateway's
// event loop goes on serving meanwhile. SQLite's own busy handler slept inside the call and froze it.
import { afterAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { BUSY_WAIT_MS } from "../../src/db/sqlite-busy";
import { ADMIN_TOKEN } from "../support/gateway";
import { spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Another process takes the write lock on `path` and keeps it `ms`; resolves once it holds it. */
async function lockedElsewhere(path: string, ms: number) {
  const script = `
    import { Database } from "bun:sqlite";
    const db = new Database(${JSON.stringify(path)});
    db.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE");
    console.log("locked");
    await Bun.sleep(${ms});
    db.exec("COMMIT");
  `;
  const p = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "inherit" });
  cleanups.push(() => p.kill());
  const reader = p.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toContain("locked");
  return p;
}

/** The longest gap between ticks of a 5 ms interval while `work` runs: how long the event loop stood still. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number; tookMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  try {
    const result = await work();
    const now = performance.now();
    // The gap up to now counts too: a call that blocked returns before any tick could run.
    return { result, stallMs: Math.max(stallMs, now - last), tookMs: now - started };
  } finally {
    clearInterval(ticker);
  }
}

test("a write waits for a lock held elsewhere without stopping the event loop, then goes through", async () => {
  const path = tempSqlitePath();
  const db = await openDatabase(path);
  cleanups.push(() => db.close());
  await db.run(sql`create table probe (id integer primary key, v text)`);
  await lockedElsewhere(path, 600);
  const { result, stallMs, tookMs } = await longestStall(() =>
    db.tx(function* (q) {
      yield* q.run(sql`insert into probe (v) values ('in a transaction')`);
      return yield* q.get<{ n: number }>(sql`select count(*) as n from probe`);
    }),
  );
  expect(result).toEqual({ n: 1 });
  expect(tookMs).toBeGreaterThan(400); // it did wait for the lock
  expect(stallMs).toBeLessThan(150); // while timers kept firing (the busy handler froze the loop for the whole 600 ms)
  await lockedElsewhere(path, 300);
  const single = await longestStall(() => db.run(sql`insert into probe (v) values ('on its own')`));
  expect(single.result).toBe(1);
  expect(single.stallMs).toBeLessThan(150);
});

test(`a lock held past ${BUSY_WAIT_MS / 1000} s: the write fails with SQLITE_BUSY, as before`, async () => {
  const path = tempSqlitePath();
  const db = await openDatabase(path);
  cleanups.push(() => db.close());
  await db.run(sql`create table probe (id integer primary key)`);
  await lockedElsewhere(path, BUSY_WAIT_MS + 2000);
  const { result, stallMs, tookMs } = await longestStall(() =>
    db.run(sql`insert into probe default values`).catch((e) => e),
  );
  expect((result as { code?: string }).code).toBe("SQLITE_BUSY");
  expect(tookMs).toBeGreaterThanOrEqual(BUSY_WAIT_MS - 50);
  expect(stallMs).toBeLessThan(150);
}, 15_000);

test("a gateway process answers other requests while an admin write waits for the lock", async () => {
  const path = tempSqlitePath();
  const gw = await spawnGateway({ DATABASE_URL: path, ADMIN_TOKEN });
  cleanups.push(() => gw.stop());
  await lockedElsewhere(path, 800);
  const creating = fetch(gw.url + "/admin/v1/accounts", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "during a lock", credits: 5 }),
  });
  await Bun.sleep(100); // the write is waiting for the lock now
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    expect((await fetch(gw.url + "/healthz")).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(150);
  }
  expect((await creating).status).toBe(201);
});
