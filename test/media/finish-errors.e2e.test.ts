// Errors while finishing a task (storing its files, pricing it, writing its rows): a synchronous result that
// cannot be finished is never generated again (the operator pays per generation), and files stored by a failed
// attempt are deleted (every retry would otherwise leave another orphaned copy in storage).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { readdirSync } from "node:fs";
import { client, ledgerOf, startMediaGateway, waitFor, type MediaGateway } from "./support";

// Main-thread engine; a 1 s deadline bounds the tasks that keep retrying.
const gw = await startMediaGateway({ MEDIA_WORKERS: "0", MEDIA_MAX_DEADLINE_SECONDS: "1" });
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

/** Files in the result storage (one token folder per stored file); no task in this file ever succeeds. */
const storedFiles = () => readdirSync(gw.storageDir);

async function expectRefunded(taskId: string) {
  const { hold, entries } = await ledgerOf(gw, taskId);
  expect(hold.status).toBe("voided");
  expect(entries).toEqual([]);
  expect(await gw.ctx.db.all(sql`select id from result_files where task_id = ${taskId}`)).toEqual([]);
}

/** A database error at the moment a task's result files are recorded (after they were stored). */
async function withResultRowsFailing<T>(fn: () => Promise<T>): Promise<T> {
  await gw.ctx.db.run(
    sql.raw(`create trigger test_result_files_fail before insert on result_files
    begin select raise(abort, 'database is broken (test)'); end`),
  );
  try {
    return await fn();
  } finally {
    await gw.ctx.db.run(sql.raw("drop trigger test_result_files_fail"));
  }
}

describe("a synchronous result that cannot be finished", () => {
  test("OpenAI Images is called once, the task fails as result_not_stored, is refunded, and leaves no file behind", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    const prompt = `only once ${crypto.randomUUID()}`;
    const rec = await withResultRowsFailing(async () => {
      const { json } = await c.createTask("gpt-image-1", { prompt, quality: "low" });
      return c.waitRecord(json.data.taskId, 10_000);
    });
    expect(rec).toMatchObject({ state: "fail", failCode: "result_not_stored", creditsConsumed: 0 });
    const generations = gw.up.requests.filter(
      (r) => r.provider === "openai-images" && (r.body as any)?.prompt === prompt,
    );
    expect(generations).toHaveLength(1); // the operator paid for one image, not one per retry
    await expectRefunded(rec.taskId);
    expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
    expect(storedFiles()).toEqual([]); // the image stored before the database error was deleted
  });
});

describe("files stored by a failed attempt are deleted", () => {
  test("an output whose file is not there (404) fails the task as result_not_stored after a few tries, and leaves no copy of the earlier ones", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    gw.up.control.set({ count: 3, missingFiles: [1] }, { model: "google/nano-banana" });
    const { json } = await c.createTask("google/nano-banana", { prompt: "x" });
    const rec = await c.waitRecord(json.data.taskId, 10_000);
    // Not retried until the deadline: the upstream said done, and would give the same missing file at every poll.
    expect(rec).toMatchObject({ state: "fail", failCode: "result_not_stored", creditsConsumed: 0 });
    expect(rec.failMsg).toContain("answered 404");
    // The first file was downloaded and stored, the second tried three times; the stored copy was deleted.
    const downloads = gw.up.requests.filter((r) => r.provider === "kie" && r.path.startsWith("/files/"));
    expect(downloads.filter((r) => r.path.startsWith("/files/missing1")).length).toBe(3);
    expect(downloads.filter((r) => !r.path.includes("missing")).length).toBe(1);
    await expectRefunded(json.data.taskId);
    expect(storedFiles()).toEqual([]);
  });

  test("a database error after the files were stored deletes them before the retry", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    gw.up.control.set({ count: 2 }, { model: "google/nano-banana" });
    const rec = await withResultRowsFailing(async () => {
      const { json } = await c.createTask("google/nano-banana", { prompt: "x" });
      // Several attempts store both files and fail on the database; then the deadline ends the task.
      await waitFor(
        () => gw.up.requests.filter((r) => r.provider === "kie" && r.path.startsWith("/files/")).length >= 4,
        5000,
        "retries",
      );
      return c.waitRecord(json.data.taskId, 10_000);
    });
    expect(rec).toMatchObject({ state: "fail", failCode: "deadline_exceeded", creditsConsumed: 0 });
    await expectRefunded(rec.taskId);
    expect(storedFiles()).toEqual([]);
  });
});

describe("a result file larger than RESULT_MAX_FILE_MB", () => {
  // The fake OpenAI Images always answers a 1×1 PNG: this proxy in front of it swaps in a 2 MB one, base64 as OpenAI
  // sends it. The default deadline (minutes): a task must fail at once, not by retrying until the deadline.
  const big = Buffer.alloc(2 * 1024 * 1024, 7).toString("base64");
  let openai = ""; // the fake's base, known once the gateway has started it
  const proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const headers = { authorization: req.headers.get("authorization") ?? "", "content-type": "application/json" };
      const res = await fetch(openai + new URL(req.url).pathname, {
        method: req.method,
        headers,
        body: await req.text(),
      });
      const json: any = await res.json();
      for (const d of json.data ?? []) d.b64_json = big;
      return Response.json(json, { status: res.status });
    },
  });
  let small: MediaGateway;
  beforeAll(async () => {
    small = await startMediaGateway({
      MEDIA_WORKERS: "0",
      RESULT_MAX_FILE_MB: "1",
      OPENAI_BASE_URL: `http://127.0.0.1:${proxy.port}`,
    });
    openai = small.up.urls.openai;
  });
  afterAll(async () => {
    await small.stop();
    await proxy.stop(true);
  });

  test("refused by its stated length, or as it arrives when sent chunked; never stored: the task fails at once (result_too_large) and is refunded", async () => {
    const { key } = await small.account(1000);
    const c = client(small, key);
    for (const chunked of [true, false]) {
      small.up.control.set(
        { file: { contentType: "image/png", body: "x".repeat(3 * 1024 * 1024), chunked } },
        { model: "google/nano-banana" },
      );
      const { json } = await c.createTask("google/nano-banana", { prompt: "too big" });
      const rec = await c.waitRecord(json.data.taskId, 5_000);
      expect(rec).toMatchObject({ state: "fail", failCode: "result_too_large", creditsConsumed: 0 });
      expect(rec.failMsg).toContain("1 MB");
    }
    expect(readdirSync(small.storageDir)).toEqual([]);
    expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
  });

  test("handed over inline as base64 (OpenAI Images): never stored, the task fails at once (result_too_large) and is refunded", async () => {
    const { key } = await small.account(1000);
    const c = client(small, key);
    const prompt = `inline too big ${crypto.randomUUID()}`;
    const { json } = await c.createTask("gpt-image-1", { prompt, quality: "low" });
    const rec = await c.waitRecord(json.data.taskId, 5_000);
    expect(rec).toMatchObject({ state: "fail", failCode: "result_too_large", creditsConsumed: 0 });
    expect(rec.failMsg).toContain("1 MB");
    const generations = small.up.requests.filter(
      (r) => r.provider === "openai-images" && (r.body as any)?.prompt === prompt,
    );
    expect(generations).toHaveLength(1); // failed at once: not generated (and paid upstream) again
    expect(readdirSync(small.storageDir)).toEqual([]);
    expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
  });
});
