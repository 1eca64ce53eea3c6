// Idempotency-Key on the POSTs that cost money, across two processes sharing one database: a repeat gets the first
// answer (an LLM call's stored body, a task creation's same task) and is charged once; another body under the same
// key is 422; duplicates sent at once run once; a stream's repeat is 409; keys belong to the account; a key is free
// again after 24 h; a malformed key is 422 naming the header, nothing run. SQLite and Postgres.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { ADMIN_TOKEN } from "../support/gateway";
import { spawnGateway, type GatewayProcess } from "../support/process";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { FAST_ENV, startMediaGateway, waitFor, type MediaGateway } from "../media/support";
import { databaseFor, dialects } from "../support/services";

for (const d of dialects.filter((x) => x.available)) {
  const fake = startFakeLlmUpstream();
  let a: MediaGateway;
  let b: GatewayProcess;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const target = await databaseFor(d.name);
    drop = target.drop;
    a = await startMediaGateway({ ...providerEnv(fake.url), DATABASE_URL: target.url });
    b = await spawnGateway({
      ...a.up.env,
      ...FAST_ENV,
      ...providerEnv(fake.url),
      STORAGE_DIR: a.storageDir,
      DATABASE_URL: target.url,
      ADMIN_TOKEN,
      DEFAULT_RATE_LIMIT: "1000/10s",
      LOG_LEVEL: "info",
    });
  }, 30_000);
  afterAll(async () => {
    await b.stop();
    await a.stop();
    await fake.stop();
    await drop();
  });

  const chat = { model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };
  const post = (base: string, key: string, path: string, body: unknown, idem?: string) =>
    fetch(base + path, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        ...(idem === undefined ? {} : { "idempotency-key": idem }),
      },
      body: JSON.stringify(body),
    });
  const count = async (table: string, accountId: string) =>
    Number(
      (await a.ctx.db.get<any>(
        sql`select count(*) as n from ${sql.identifier(table)} where account_id = ${accountId}`,
      ))!.n,
    );
  /** Until the first answer is stored (an LLM answer is stored once read to its end, just after the client has it). */
  async function stored(accountId: string, key: string) {
    for (let i = 0; i < 200; i++) {
      const r = await a.ctx.db.get<any>(
        sql`select state from idempotency_keys where account_id = ${accountId} and key = ${key}`,
      );
      if (r?.state === "done") return;
      await Bun.sleep(10);
    }
    throw new Error("answer never stored");
  }

  describe(`Idempotency-Key (${d.name})`, () => {
    test("an LLM call repeated on the other process gets the first answer and is charged once", async () => {
      const { accountId, key } = await a.account(100);
      const before = fake.requests.length;
      const first = await post(a.url, key, "/v1/chat/completions", chat, "retry-1");
      expect(first.status).toBe(200);
      const body = await first.text();
      await stored(accountId, "retry-1");
      const again = await post(b.url, key, "/v1/chat/completions", chat, "retry-1");
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.text()).toBe(body);
      expect(fake.requests.length).toBe(before + 1);
      await a.ctx.llmLedger.committedFor(accountId, 10_000); // a reader's 250 ms can be short of a busy commit
      expect(await count("usage_records", accountId)).toBe(1);
    });

    test("the same key with another body: 422 idempotency_key_reused, nothing run", async () => {
      const { accountId, key } = await a.account(100);
      expect((await post(a.url, key, "/v1/chat/completions", chat, "k")).status).toBe(200);
      await stored(accountId, "k");
      const before = fake.requests.length;
      const r = await post(b.url, key, "/v1/chat/completions", { ...chat, max_tokens: 51 }, "k");
      expect(r.status).toBe(422);
      expect(await r.json()).toMatchObject({ error: { code: "idempotency_key_reused", param: "Idempotency-Key" } });
      expect(fake.requests.length).toBe(before);
    });

    test("duplicates sent at once to both processes run once; the others are told it is in progress or get its answer", async () => {
      const { accountId, key } = await a.account(100);
      const before = fake.requests.length;
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => post(i % 2 ? b.url : a.url, key, "/v1/chat/completions", chat, "burst")),
      );
      const ran = answers.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null);
      expect(ran.length).toBe(1);
      for (const r of answers.filter((x) => x !== ran[0])) {
        if (r.status === 200) expect(r.headers.get("idempotent-replayed")).toBe("true");
        else expect([r.status, ((await r.json()) as any).error.code]).toEqual([409, "idempotency_in_progress"]);
      }
      expect(fake.requests.length).toBe(before + 1);
      // The call may have run on the other process, whose record is committed by its own ledger.
      await waitFor(async () => (await count("usage_records", accountId)) > 0, 5_000, "the call's record");
      expect(await count("usage_records", accountId)).toBe(1);
    });

    test("a finished stream is not stored: its repeat is 409 idempotency_replay_unavailable, not run again", async () => {
      const { accountId, key } = await a.account(100);
      const first = await post(a.url, key, "/v1/chat/completions", { ...chat, stream: true }, "s");
      expect(first.status).toBe(200);
      await first.text();
      await stored(accountId, "s");
      const before = fake.requests.length;
      const r = await post(b.url, key, "/v1/chat/completions", { ...chat, stream: true }, "s");
      expect(r.status).toBe(409);
      expect(((await r.json()) as any).error.code).toBe("idempotency_replay_unavailable");
      expect(fake.requests.length).toBe(before);
    });

    test("task creation repeated on both doors and processes: the same task, one hold", async () => {
      const { accountId, key } = await a.account(1000);
      const native = { model: "google/nano-banana", input: { prompt: "a fox" } };
      const one = (await (await post(a.url, key, "/api/v1/jobs/createTask", native, "task-1")).json()) as any;
      const two = (await (await post(b.url, key, "/api/v1/jobs/createTask", native, "task-1")).json()) as any;
      expect(one.data.taskId).toStartWith("task_");
      expect(two).toEqual(one);
      const alias = { model: "google/nano-banana", prompt: "a fox" };
      const x = (await (await post(b.url, key, "/v1/images/generations", alias, "task-2")).json()) as any;
      const y = (await (await post(a.url, key, "/v1/images/generations", alias, "task-2")).json()) as any;
      expect(y).toEqual(x);
      expect(await count("tasks", accountId)).toBe(2);
      expect(
        Number(
          (await a.ctx.db.get<any>(
            sql`select count(*) as n from holds where account_id = ${accountId} and kind = ${"task"}`,
          ))!.n,
        ),
      ).toBe(2);
    });

    test("keys are the account's: another account's same key runs its own request", async () => {
      const one = await a.account(100);
      const two = await a.account(100);
      expect((await post(a.url, one.key, "/v1/chat/completions", chat, "shared")).status).toBe(200);
      await stored(one.accountId, "shared");
      const r = await post(a.url, two.key, "/v1/chat/completions", { ...chat, max_tokens: 60 }, "shared");
      expect([r.status, r.headers.get("idempotent-replayed")]).toEqual([200, null]);
    });

    test("after 24 h a key is free again", async () => {
      const { accountId, key } = await a.account(100);
      expect((await post(a.url, key, "/v1/chat/completions", chat, "old")).status).toBe(200);
      await stored(accountId, "old");
      await a.ctx.db.run(
        sql`update idempotency_keys set expires_at = ${Date.now() - 1} where account_id = ${accountId}`,
      ); // a day passes
      const r = await post(b.url, key, "/v1/chat/completions", { ...chat, max_tokens: 70 }, "old");
      expect([r.status, r.headers.get("idempotent-replayed")]).toEqual([200, null]);
    });

    test("a request lost with its process (still running after an hour) frees its key; the sweeper forgets expired keys", async () => {
      const { accountId, key } = await a.account(100);
      const { Idempotency, STALE_RUNNING_MS } = await import("../../src/http/idempotency");
      const now = Date.now();
      const crashed = new Idempotency(a.ctx.db, () => now - STALE_RUNNING_MS - 1);
      expect((await crashed.begin(accountId, "lost", `POST /v1/chat/completions\n${JSON.stringify(chat)}`)).run).toBe(
        true,
      ); // never finished
      const r = await post(b.url, key, "/v1/chat/completions", chat, "lost");
      expect([r.status, r.headers.get("idempotent-replayed")]).toEqual([200, null]);
      await stored(accountId, "lost");
      await a.ctx.db.run(sql`update idempotency_keys set expires_at = ${now - 1} where account_id = ${accountId}`);
      expect(await new Idempotency(a.ctx.db).sweepExpired()).toBeGreaterThanOrEqual(1);
      expect(await count("idempotency_keys", accountId)).toBe(0);
    });

    test("an empty key or one over 255 characters: 422 naming the header in each protocol's shape, nothing run", async () => {
      const { accountId, key } = await a.account(100);
      const before = fake.requests.length;
      for (const bad of ["", "k".repeat(256)]) {
        const o = await post(a.url, key, "/v1/chat/completions", chat, bad);
        expect([o.status, ((await o.json()) as any).error.param]).toEqual([422, "Idempotency-Key"]);
        const m = await post(
          a.url,
          key,
          "/v1/messages",
          { model: "claude-opus-4-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] },
          bad,
        );
        expect([m.status, ((await m.json()) as any).type]).toEqual([422, "error"]);
        const t = await post(
          a.url,
          key,
          "/api/v1/jobs/createTask",
          { model: "google/nano-banana", input: { prompt: "x" } },
          bad,
        );
        expect(await t.json()).toMatchObject({ code: 422 });
      }
      expect(fake.requests.length).toBe(before);
      expect([await count("tasks", accountId), await count("usage_records", accountId)]).toEqual([0, 0]);
    });
  });
}
