// A key's budget is enforced with holds, like the wallet: a call or task whose hold does not fit what remains of any
// capped period is 402 key_budget_exceeded in the caller's protocol, stating what remains and when the period
// resets, before anything goes upstream; a call's end moves the count to what it was charged. Concurrent holds on
// one key from two processes never overspend; periods reset at UTC boundaries (injected clock). SQLite and Postgres.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { budgetUsed, KeyBudgets } from "../../src/accounts/key-budgets";
import { Accounts } from "../../src/accounts/service";
import { openDatabase, type Db } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { databaseFor, dialects, skipNote } from "../support/services";

const C = 1_000_000; // µcr per credit
const root = new URL("../..", import.meta.url).pathname;
const usedOf = async (db: Db, keyId: string, period = "day") =>
  Number(
    (await db.get<any>(sql`select used from key_budgets where key_id = ${keyId} and period = ${period}`))?.used ?? NaN,
  );

for (const d of dialects) {
  describe.skipIf(!d.available)(`key budgets (${d.name})`, () => {
    skipNote("Postgres", d.available, "key budgets on Postgres");
    let url: string;
    let drop: () => Promise<void>;
    let db: Db;
    let accounts: Accounts;
    beforeAll(async () => {
      ({ url, drop } = await databaseFor(d.name));
      db = await openDatabase(url);
      accounts = new Accounts(db, new Ledger(db));
    });
    afterAll(async () => {
      await db.close();
      await drop();
    });

    test("200 concurrent holds on one key from two processes never overspend its budget", async () => {
      const a = await accounts.createAccount("racers", 1000 * C);
      const k = await accounts.createKey(a.id, { name: "agent", budget: { day: 60 * C } });
      const run = () =>
        Bun.spawn(["bun", "test/support/budget-holds.ts", url, k.id, "100", String(C), String(60 * C)], {
          cwd: root,
          stdout: "pipe",
          stderr: "pipe",
        });
      const procs = [run(), run()];
      const results = await Promise.all(
        procs.map(async (p) => {
          const [out, err] = [await new Response(p.stdout).text(), await new Response(p.stderr).text()];
          expect([await p.exited, err]).toEqual([0, ""]);
          return JSON.parse(out) as { held: number; charged: number; refused: number };
        }),
      );
      const charged = results.reduce((s, r) => s + r.charged, 0);
      const refused = results.reduce((s, r) => s + r.refused, 0);
      expect(results.reduce((s, r) => s + r.held + r.refused, 0)).toBe(200);
      expect(refused).toBeGreaterThan(0); // the cap was reached
      expect(charged).toBeLessThanOrEqual(60 * C);
      expect(await usedOf(db, k.id)).toBe(charged); // the count is exactly what was charged
    }, 60_000);

    test("periods reset at their UTC boundaries (injected clock); a hold from before a reset leaves the new period alone", async () => {
      const a = await accounts.createAccount("clock", 1000 * C);
      const k = await accounts.createKey(a.id, { name: "clock", budget: { day: 10 * C, week: 15 * C } });
      let now = Date.parse("2026-11-29T23:59:59.999Z"); // a Sunday: the day and the week end together
      const budgets = new KeyBudgets(
        db,
        (e) => {
          throw e;
        },
        () => now,
      );
      const key = { keyId: k.id, budget: { day: 10 * C, week: 15 * C } };
      const late = (await budgets.hold(key, 10 * C))!;
      await expect(budgets.hold(key, 1)!).rejects.toMatchObject({
        status: 402,
        code: "key_budget_exceeded",
        message:
          "This key's day budget has 0 of 10 credits left, and this request needs a hold of 0.000001. It resets at 2026-11-30T00:00:00.000Z; nothing was charged.",
      });
      now = Date.parse("2026-11-30T00:00:00.000Z"); // Monday: a new day and a new week
      await budgets.hold(key, 10 * C);
      budgets.post(late, 2 * C); // Sunday's call ends after midnight: Sunday's counts, not Monday's
      await budgets.committedFor(k.id);
      expect([await usedOf(db, k.id, "day"), await usedOf(db, k.id, "week")]).toEqual([10 * C, 10 * C]);
      await expect(budgets.hold(key, 6 * C)!).rejects.toMatchObject({
        message: expect.stringContaining(
          "day budget has 0 of 10 credits left, and this request needs a hold of 6. It resets at 2026-12-01T00:00:00.000Z",
        ),
      });
      now = Date.parse("2026-12-01T00:00:00.000Z"); // Tuesday: a new day, the same week
      await expect(budgets.hold(key, 6 * C)!).rejects.toMatchObject({
        message: expect.stringContaining(
          "week budget has 5 of 15 credits left, and this request needs a hold of 6. It resets at 2026-12-07T00:00:00.000Z",
        ),
      });
      expect(await budgetUsed(db, k.id, now)).toMatchObject({ day: 0, week: 10 * C }); // the refused hold reserved nothing, not even in the day it fitted
      await budgets.hold(key, 5 * C);
      expect([await usedOf(db, k.id, "day"), await usedOf(db, k.id, "week")]).toEqual([5 * C, 15 * C]);
    });

    test("a lifetime budget never resets; a budget set mid-period counts what the key already spent", async () => {
      const a = await accounts.createAccount("life", 1000 * C);
      const k = await accounts.createKey(a.id, { name: "life" });
      const now = Date.now();
      await db.run(sql`insert into usage_records (id, request_id, account_id, key_id, model, endpoint, provider, status, input_tokens, output_tokens,
          cache_read_tokens, cache_write_tokens, cost, created_at)
        values (${"req_x"}, ${"req_x"}, ${a.id}, ${k.id}, ${"gpt-5.2"}, ${"/v1/chat/completions"}, ${"openai"}, ${"ok"}, ${1}, ${1}, ${0}, ${0}, ${3 * C}, ${now})`);
      await accounts.updateKey(a.id, k.id, { budget: { lifetime: 5 * C } });
      expect(await usedOf(db, k.id, "lifetime")).toBe(3 * C);
      const budgets = new KeyBudgets(
        db,
        (e) => {
          throw e;
        },
        () => now + 400 * 86_400_000,
      );
      await expect(budgets.hold({ keyId: k.id, budget: { lifetime: 5 * C } }, 3 * C)!).rejects.toMatchObject({
        message:
          "This key's lifetime budget has 2 of 5 credits left, and this request needs a hold of 3. A lifetime budget does not reset; nothing was charged.",
      });
    });
  });
}

describe.each(dialects.filter((d) => d.available).map((d) => d.name))("budgets through the gateway (%s)", (name) => {
  const fake = startFakeLlmUpstream();
  let gw: MediaGateway;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const target = await databaseFor(name);
    drop = target.drop;
    gw = await startMediaGateway({ ...providerEnv(fake.url), DATABASE_URL: target.url });
  });
  afterAll(async () => {
    await gw.stop();
    await fake.stop();
    await drop();
  });
  const post = (key: string, path: string, body: unknown) =>
    fetch(gw.url + path, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
    });
  const chat = { model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };

  test("a hold beyond what remains: 402 key_budget_exceeded in each protocol's shape, nothing sent, held or charged", async () => {
    const { accountId, keyId, key } = await gw.account(1000);
    await gw.ctx.accounts.updateKey(accountId, keyId, { budget: { day: 0.5 * C } });
    const before = fake.requests.length;
    const o = await post(key, "/v1/chat/completions", { ...chat, max_tokens: 100_000 });
    expect(o.status).toBe(402);
    const oe = ((await o.json()) as any).error;
    expect(oe).toMatchObject({ code: "key_budget_exceeded", type: "insufficient_quota" });
    expect(oe.message).toContain("day budget has 0.5 of 0.5 credits left");
    expect(oe.message).toContain("It resets at ");
    const a = await post(key, "/v1/messages", {
      model: "claude-opus-4-5",
      max_tokens: 100_000,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(a.status).toBe(402);
    expect(await a.json()).toMatchObject({ type: "error", error: { message: expect.stringContaining("day budget") } });
    const c = client(gw, key);
    const t = await c.createTask("google/nano-banana", { prompt: "a fox" });
    expect(t.json).toMatchObject({ code: 402, error_code: "key_budget_exceeded" });
    const alias = await c.call("POST", "/v1/images/generations", { model: "google/nano-banana", prompt: "a fox" });
    expect([alias.status, alias.json.error.code]).toEqual([402, "key_budget_exceeded"]);
    expect(fake.requests.length).toBe(before);
    expect(await gw.ctx.ledger.balance(accountId)).toEqual({ balance: 1000 * C, held: 0, available: 1000 * C });
    expect(await usedOf(gw.ctx.db, keyId)).toBe(0);
    expect(
      Number((await gw.ctx.db.get<any>(sql`select count(*) as n from tasks where account_id = ${accountId}`))!.n),
    ).toBe(0);
  });

  test("calls and tasks count what they were charged; a failed task gives its hold back; GET /v1/key agrees", async () => {
    const { accountId, keyId, key } = await gw.account(1000);
    await gw.ctx.accounts.updateKey(accountId, keyId, { budget: { day: 100 * C, month: 500 * C } });
    expect((await post(key, "/v1/chat/completions", chat)).status).toBe(200);
    const c = client(gw, key);
    const ok = await c.createTask("google/nano-banana", { prompt: "a fox" });
    await c.waitRecord(ok.json.data.taskId);
    gw.up.control.set({ fail: { message: "nsfw content", code: "content_policy_violation" } }, { provider: "fal" });
    const failed = await c.createTask("fal-ai/kling-image/o1", { prompt: "x" });
    expect((await c.waitRecord(failed.json.data.taskId)).state).toBe("fail");
    gw.up.control.set({}, { provider: "fal" });
    await gw.ctx.keyBudgets!.committedFor(keyId);
    await gw.ctx.llmLedger.committedFor(accountId, 10_000); // a reader's 250 ms can be short of a busy commit
    const spent = 1000 * C - (await gw.ctx.ledger.balance(accountId))!.balance; // what the wallet was charged
    expect(spent).toBeGreaterThan(20 * C);
    expect([await usedOf(gw.ctx.db, keyId, "day"), await usedOf(gw.ctx.db, keyId, "month")]).toEqual([spent, spent]);
    const status = (await (
      await fetch(gw.url + "/v1/key", { headers: { authorization: `Bearer ${key}` } })
    ).json()) as any;
    expect(status.budget.day).toMatchObject({
      limit_credits: 100,
      spent_credits: spent / C,
      remaining_credits: 100 - spent / C,
    });
  });

  test("a key without a budget keeps no budget rows", async () => {
    const { keyId, key } = await gw.account(1000);
    expect((await post(key, "/v1/chat/completions", chat)).status).toBe(200);
    const c = client(gw, key);
    await c.waitRecord((await c.createTask("google/nano-banana", { prompt: "a fox" })).json.data.taskId);
    expect(await gw.ctx.db.all(sql`select * from key_budgets where key_id = ${keyId}`)).toEqual([]);
    expect(
      (await gw.ctx.db.get<any>(sql`select budget_hold from tasks where key_id = ${keyId}`))!.budget_hold,
    ).toBeNull();
  });
});
