import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { BACKSTOP_PAGES, startCheckpointer, type Checkpointer } from "../../src/db/checkpointer";
import { openDatabase } from "../../src/db/client";
import { tempSqlitePath } from "../support/services";

// The gateway's SQLite connection leaves WAL checkpoints to a worker (src/db/checkpointer.ts), so its commits
// never pause to copy the WAL back. What a user would notice if this broke: an ever-growing -wal file (no one
// checkpoints), or the pauses coming back (the connection still checkpoints itself).

// Several tests write for seconds and wait for the worker's 200 ms turns (15 s seen under load); the preload's
// setDefaultTimeout reaches only the first file of a full run (oven-sh/bun#43787), so the file sets it again.
setDefaultTimeout(30_000);

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f(); // last registered, first undone
});

function sqliteFile() {
  const path = tempSqlitePath();
  const raw = new Database(path, { create: true });
  raw.exec(
    "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; create table t (id integer primary key, v text)",
  );
  cleanup.push(() => raw.close());
  return { path, raw };
}

const autocheckpoint = (raw: Database) => (raw.query("PRAGMA wal_autocheckpoint").get() as any).wal_autocheckpoint;
const walBytes = (path: string) => statSync(path + "-wal").size;
const writeRound = (raw: Database) =>
  raw.transaction(() => {
    for (let i = 0; i < 400; i++) raw.query("insert into t (v) values (?)").run("x".repeat(1000));
  })();

/**
 * How many times the WAL has been started over: the checkpoint sequence number in its header (bytes 12-15), which
 * SQLite increments each time a writer finds every frame copied back and starts writing the log from the top.
 */
function walStarts(path: string): number {
  const fd = openSync(path + "-wal", "r");
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

/**
 * Waits, with one small write now and then (only a writer starts the WAL over), until the WAL has been started
 * over. Nothing in the test's connection checkpoints, so only the worker's checkpoint can bring that about.
 */
async function untilWalStartsOver(raw: Database, path: string) {
  const before = walStarts(path);
  while (walStarts(path) === before) {
    await Bun.sleep(50);
    raw.query("insert into t (v) values (?)").run("y");
  }
}

test("the connection stops checkpointing; the worker's checkpoints start the WAL over, so it stays one round long", async () => {
  const { path, raw } = sqliteFile();
  const errors: string[] = [];
  const cp = await startCheckpointer(raw, path, (m) => errors.push(m));
  cleanup.push(() => cp.stop());
  expect(autocheckpoint(raw)).toBe(BACKSTOP_PAGES);

  // Ten rounds of ~400 KB. Unchecked, the WAL would hold all of them (~4 MB, the next test); started over after
  // each round, it stays about one round long.
  for (let round = 0; round < 10; round++) {
    writeRound(raw);
    await untilWalStartsOver(raw, path);
  }
  expect(walBytes(path)).toBeLessThan(1_500_000);
  expect(errors).toEqual([]);
  expect((raw.query("select count(*) as n from t where v != 'y'").get() as any).n).toBe(4000);
});

test("without the worker the WAL grows and is never started over, which is what the test above would see if the worker did nothing", async () => {
  const { path, raw } = sqliteFile();
  raw.exec("PRAGMA wal_autocheckpoint = 0");
  writeRound(raw);
  const starts = walStarts(path);
  for (let round = 1; round < 10; round++) writeRound(raw);
  expect(walStarts(path)).toBe(starts);
  expect(walBytes(path)).toBeGreaterThan(3_500_000);
});

// Writes that never stop: a gateway under full load commits every few milliseconds. The worker checkpoints back to
// back while the log grows, so that one lands between two commits and the writer starts the WAL over; whether it
// does, after how much, depends on how the two threads are scheduled (on a busy machine it did not within 20 MB).
// What does not is the backstop: past it the writing connection checkpoints itself, at its own commits. So the
// bound asserted is the backstop's, after a fixed amount written, however fast or busy the machine is.
async function write(raw: Database, rounds: number, gap: () => Promise<unknown>) {
  const insert = raw.query("insert into t (v) values (?)");
  const round = raw.transaction(() => {
    for (let i = 0; i < 20; i++) insert.run("x".repeat(1000));
  });
  for (let i = 0; i < rounds; i++) {
    round();
    await gap();
  }
  return rounds * 20_000;
}

test.each([
  ["short gaps (the gateway's pattern)", () => Bun.sleep(1)],
  ["no gap at all", () => new Promise((r) => setImmediate(r))],
])("under sustained writes with %s the WAL is started over and held to the backstop", async (_, gap) => {
  const { path, raw } = sqliteFile();
  const backstopPages = 2000; // ~8 MB instead of ~400 MB
  const cp = await startCheckpointer(raw, path, () => {}, backstopPages);
  cleanup.push(() => cp.stop());
  writeRound(raw);
  const starts = walStarts(path);
  const written = await write(raw, 2000, gap); // ~40 MB
  expect(walStarts(path)).toBeGreaterThan(starts);
  // Never checkpointed, it would hold all that was written; held to the backstop it stays within a few times it.
  expect(written).toBeGreaterThan(4 * backstopPages * 4096);
  expect(walBytes(path)).toBeLessThan(3 * backstopPages * 4096);
});

test("if the worker dies, the connection checkpoints itself again and the error is reported", async () => {
  const { path, raw } = sqliteFile();
  let reported: (m: string) => void = () => {};
  const report = new Promise<string>((r) => (reported = r));
  const cp: Checkpointer = await startCheckpointer(raw, path, (m) => reported(m));
  cp.worker.terminate();
  expect(await report).toContain("checkpoint worker exited");
  expect(autocheckpoint(raw)).toBe(1000); // set before the error is reported
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

test("once the database is closed nothing of the checkpointer keeps a process (the CLI, say) alive", async () => {
  // An unref'd timer fires only while something else keeps the event loop alive: here, 1.5 s after the close.
  const script = `
    import { openDatabase } from ${JSON.stringify(new URL("../../src/db/client", import.meta.url).pathname)};
    const db = await openDatabase(${JSON.stringify(tempSqlitePath())}, { backgroundCheckpoints: { onError() {} } });
    await db.close();
    setTimeout(() => console.log("still alive"), 1500).unref();
  `;
  const p = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "inherit" });
  expect(await p.exited).toBe(0);
  expect(await new Response(p.stdout).text()).not.toContain("still alive");
}, 15_000);
