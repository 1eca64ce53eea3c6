// Real gateway processes: a gateway SIGKILLed mid-task and restarted finishes the task and settles it once; two
// gateways on one Postgres split the work without ever submitting or settling a task twice.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { startFakeMediaUpstreams } from "../fakes/media/index";
import { spawnGateway, type GatewayProcess } from "../support/process";
import { freshPostgres, pgAvailable, skipNote, tempSqlitePath } from "../support/services";
import { client, FAST_ENV, waitFor } from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { AccountView, KeyCreated, LedgerCheck } from "../../src/accounts/model";

const ADMIN = "process-test-admin-token-0123";
const up = startFakeMediaUpstreams();
const running: GatewayProcess[] = [];
afterAll(async () => {
  for (const g of running) if (g.proc.exitCode === null && !g.proc.killed) await g.stop();
  await up.stop();
});

function freePort(): number {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}

async function start(env: Record<string, string>) {
  const g = await spawnGateway({
    ...up.env,
    ...FAST_ENV,
    LOG_LEVEL: "info",
    ADMIN_TOKEN: ADMIN,
    DEFAULT_RATE_LIMIT: "10000/10s",
    MEDIA_LEASE_SECONDS: "1",
    ...env,
  });
  running.push(g);
  return g;
}

async function account(url: string, credits: number, maxConcurrentTasks = 2) {
  const h = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
  const a = await jsonOf<AnswerOf<typeof AccountView>>(
    await fetch(url + "/admin/v1/accounts", {
      method: "POST",
      headers: h,
      body: JSON.stringify({ name: "p", credits }),
    }),
  );
  const k = await jsonOf<AnswerOf<typeof KeyCreated>>(
    await fetch(`${url}/admin/v1/accounts/${a.id}/keys`, {
      method: "POST",
      headers: h,
      body: JSON.stringify({ name: "k", max_concurrent_tasks: maxConcurrentTasks }),
    }),
  );
  return { accountId: a.id, key: k.key };
}

describe("crash and restart", () => {
  test("SIGKILL mid-task: the restarted gateway finishes it, submits it once and settles it once", async () => {
    const port = String(freePort());
    const env = {
      DATABASE_URL: tempSqlitePath(),
      STORAGE_DIR: mkdtempSync(join(tmpdir(), "sy-files-")),
      PORT: port,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    };
    const first = await start(env);
    const { key } = await account(first.url, 1000);
    up.control.set({ never: true }, { model: "kling-3.0/video" });
    const c1 = client(first, key);
    const taskId = (await c1.createTask("kling-3.0/video", { prompt: "crash", duration: 5 })).json.data.taskId;
    await waitFor(async () => (await c1.record(taskId)).state === "generating", 5000, "generating");
    await Bun.sleep(100); // a few polls in flight
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    const fake = [...up.control.tasks.values()].find((t) => (t.input as any).prompt === "crash")!;
    up.control.update(fake.id, { never: false, polls: 0 });
    const second = await start(env);
    const c2 = client(second, key);
    const rec = await c2.waitRecord(taskId, 15_000);
    expect(rec).toMatchObject({ state: "success", creditsConsumed: 350 });
    const file = await fetch(JSON.parse(rec.resultJson).resultUrls[0]);
    expect(file.status).toBe(200);
    expect(up.requests.filter((r) => r.method === "POST" && (r.body as any)?.input?.prompt === "crash")).toHaveLength(
      1,
    );
    expect(await c2.credits()).toMatchObject({ credits: 650, held_credits: 0 });
    const check = await jsonOf<AnswerOf<typeof LedgerCheck>>(
      await fetch(`${second.url}/admin/v1/ledger/check`, { headers: { authorization: `Bearer ${ADMIN}` } }),
    );
    expect(check.ok).toBe(true);
    await second.stop();
  }, 60_000);
});

skipNote("Postgres", pgAvailable, "two gateway processes on one Postgres");
describe.skipIf(!pgAvailable)("two processes on one Postgres", () => {
  test("24 tasks created on both: each submitted upstream once and settled once", async () => {
    const db = await freshPostgres();
    try {
      const env = { DATABASE_URL: db.url, MEDIA_WORKERS: "2", STORAGE_DIR: mkdtempSync(join(tmpdir(), "sy-files-")) };
      const a = await start(env);
      const b = await start(env);
      up.control.set({ polls: 3 }, { model: "z-image" });
      const { key } = await account(a.url, 1000, 50);
      const ids: string[] = [];
      for (let i = 0; i < 24; i++) {
        const gw = i % 2 ? a : b;
        const r = await client(gw, key).createTask("z-image", { prompt: `pg-${i}` });
        expect(r.status).toBe(200);
        ids.push(r.json.data.taskId);
      }
      for (const id of ids) expect((await client(a, key).waitRecord(id, 20_000)).state).toBe("success");
      const sql = new SQL(db.url, { max: 1 });
      try {
        const submits = up.requests.filter(
          (r) => r.method === "POST" && String((r.body as any)?.input?.prompt ?? "").startsWith("pg-"),
        );
        expect(submits).toHaveLength(24);
        expect(new Set(submits.map((r) => (r.body as any).input.prompt)).size).toBe(24);
        const charges =
          await sql`select h.ref, count(e.id)::int as n from holds h join entries e on e.hold_id = h.id where h.kind = 'task' group by h.ref`;
        expect(charges).toHaveLength(24);
        expect(charges.every((r: any) => r.n === 1)).toBe(true);
        const [w] = await sql`select balance, held from wallets`;
        expect(Number(w.balance)).toBe(1000_000_000 - 24 * 4_000_000);
        expect(Number(w.held)).toBe(0);
      } finally {
        await sql.close();
      }
      await a.stop();
      await b.stop();
    } finally {
      await db.drop();
    }
  }, 90_000);
});
