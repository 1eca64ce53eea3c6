import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { BACKSTOP_PAGES, startCheckpointer, type Checkpointer } from "../../src/db/checkpointer";
import { openDatabase } from "../../src/db/client";
import { tempSqlitePath } from "../support/services";

// The gateway's SQLite connection leaves WAL checkpoints to a worker (src/db/checkpointer.ts), so its commits
// never pause to copy the WAL back. What a user would notice if this broke: an ever-growing -wal file (no one
// checkpoints), or the pauses coming back (the connection still checkpoints itself).

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f(); // last registered, first undone
});

function sqliteFile() {
  const path = tempSqlitePath();
  const raw = new Database(path, { create: true });
  raw.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; create table t (id integer primary key, v text)");
  cleanup.push(() => raw.close());
  return { path, raw };
}

const autocheckpoint = (raw: Database) => (raw.query("PRAGMA wal_autocheckpoint").get() as any).wal_autocheckpoint;
const walBytes = (path: string) => statSync(path + "-wal").size;
const writeRound = (raw: Database) => raw.transaction(() => { for (let i = 0; i < 400; i++) raw.query("insert into t (v) values (?)").run("x".repeat(1000)); })();

test("the connection stops checkpointing; the worker keeps the WAL from growing", async () => {
  const { path, raw } = sqliteFile();
  const errors: string[] = [];
  const cp = await startCheckpointer(raw, path, (m) => errors.push(m));
  cleanup.push(() => cp.stop());
  expect(autocheckpoint(raw)).toBe(BACKSTOP_PAGES);

  // Ten rounds of ~400 KB. Unchecked, the WAL would hold all of them (~4 MB); checkpointed between rounds, the
  // writer starts it over and it stays about one round long.
  for (let round = 0; round < 10; round++) {
    writeRound(raw);
    await Bun.sleep(250);
  }
  expect(walBytes(path)).toBeLessThan(1_500_000);
  expect(errors).toEqual([]);
  expect((raw.query("select count(*) as n from t").get() as any).n).toBe(4000);
});

test("without the worker the WAL grows, which is what the test above would see if the worker did nothing", async () => {
  const { path, raw } = sqliteFile();
  raw.exec("PRAGMA wal_autocheckpoint = 0");
  for (let round = 0; round < 10; round++) writeRound(raw);
  expect(walBytes(path)).toBeGreaterThan(3_500_000);
});

// Writes that never stop: a gateway under full load commits every few milliseconds. A checkpoint on a timer never
// catches up with that (the WAL grew by ~80 MB/s on the bench); the worker checkpoints back to back while the log
// grows, so one soon lands between two commits and the writer starts the WAL over.
async function writeFor(raw: Database, ms: number, gap = () => Bun.sleep(1)) {
  const insert = raw.query("insert into t (v) values (?)");
  const round = raw.transaction(() => { for (let i = 0; i < 20; i++) insert.run("x".repeat(1000)); });
  let written = 0;
  for (const start = Date.now(); Date.now() - start < ms; ) {
    round();
    written += 20_000;
    await gap();
  }
  return written;
}

test("under sustained writes with short gaps (the gateway's pattern) the WAL is started over and stays bounded", async () => {
  const { path, raw } = sqliteFile();
  const cp = await startCheckpointer(raw, path, () => {});
  cleanup.push(() => cp.stop());
  const written = await writeFor(raw, 2000);
  expect(written).toBeGreaterThan(20_000_000);
  // Unchecked it would be larger than all that was written (~50 MB for ~34 MB here); it stays near 6 MB.
  expect(walBytes(path)).toBeLessThan(written / 2);
});

test("a writer that leaves no gap at all is held to the backstop: the connection checkpoints itself past it", async () => {
  const { path, raw } = sqliteFile();
  const cp = await startCheckpointer(raw, path, () => {}, 2000); // ~8 MB instead of ~400 MB
  cleanup.push(() => cp.stop());
  const written = await writeFor(raw, 1500, () => new Promise((r) => setImmediate(r)));
  expect(written).toBeGreaterThan(50_000_000);
  // Without the backstop this writer outruns the worker: the WAL grew past the size of all it wrote.
  expect(walBytes(path)).toBeLessThan(24_000_000);
});

test("if the worker dies, the connection checkpoints itself again and the error is reported", async () => {
  const { path, raw } = sqliteFile();
  const errors: string[] = [];
  const cp: Checkpointer = await startCheckpointer(raw, path, (m) => errors.push(m));
  cp.worker.terminate();
  for (let i = 0; i < 50 && autocheckpoint(raw) === BACKSTOP_PAGES; i++) await Bun.sleep(20);
  expect(autocheckpoint(raw)).toBe(1000);
  expect(errors.join("\n")).toContain("checkpoint worker exited");
});

test("the gateway's database opens with it and closing stops it cleanly", async () => {
  const path = tempSqlitePath();
  const errors: string[] = [];
  const db = (await openDatabase(path, { backgroundCheckpoints: { onError: (m) => errors.push(m) } })) as any;
  expect(autocheckpoint(db.raw)).toBe(BACKSTOP_PAGES);
  await db.close();
  expect(errors).toEqual([]);
  // A plain open (the CLI, media workers) keeps SQLite's own checkpoints.
  const plain = (await openDatabase(path)) as any;
  expect(autocheckpoint(plain.raw)).toBe(1000);
  await plain.close();
});
