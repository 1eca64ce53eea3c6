// Task leases while a step runs: a step may outlast the lease (a slow result download, a 2-minute OpenAI image),
// and a task claimed twice is polled, downloaded and submitted twice. The engine keeps the lease of a running step,
// never claims a task it already has in flight, and a step that finds its task taken over stops.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Logger } from "../../src/log";
import { startMedia } from "../../src/media/workers";
import { client, ledgerOf, startMediaGateway, waitFor } from "./support";

// The gateway's own engine is never started: each test runs the engines it needs, with its own lease.
const gw = await startMediaGateway({ MEDIA_WORKERS: "0" }, { autostart: false });
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

const MODEL = "google/nano-banana"; // one kie route, 20 credits
const STOLEN_BY = "another-worker";

/** The fake upstream's requests from now on, by kind. */
function upstreamCalls() {
  const from = gw.up.requests.length;
  const kie = () => gw.up.requests.slice(from).filter((r) => r.provider === "kie");
  return {
    submits: () => kie().filter((r) => r.path.startsWith("/api/v1/jobs/createTask")).length,
    polls: () => kie().filter((r) => r.path.startsWith("/api/v1/jobs/recordInfo")).length,
    downloads: () => kie().filter((r) => r.path.startsWith("/files/")).length,
  };
}

/** A logger that keeps what the engine logs. */
function capturedLog() {
  const lines: Array<{ level: string; msg: string; fields?: any }> = [];
  const at = (level: string) => (msg: string, fields?: object) => void lines.push({ level, msg, fields });
  const logger: Logger = {
    enabled: () => true,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
  return { lines, logger };
}

async function taskRow(id: string) {
  return (await gw.ctx.db.get<any>(sql`select state, lease_owner, upstream_ref from tasks where id = ${id}`))!;
}

async function expectChargedOnce(taskId: string) {
  const { hold, entries } = await ledgerOf(gw, taskId);
  expect(hold.status).toBe("posted");
  expect(entries.map((e: any) => Number(e.amount))).toEqual([-20_000_000]);
}

describe("a step longer than the lease", () => {
  test("a result download slower than the lease completes once: one submit, one download, one success, charged once", async () => {
    // Two engines (two owners, as two processes would be) and a 1 s lease; the download takes 3 s.
    const engines = await Promise.all([
      startMedia(gw.ctx, { MEDIA_LEASE_SECONDS: "1" }),
      startMedia(gw.ctx, { MEDIA_LEASE_SECONDS: "1" }),
    ]);
    const calls = upstreamCalls();
    const c = client(gw, (await gw.account(1000)).key);
    let rec;
    try {
      gw.up.control.set({ fileDelayMs: 3000 }, { model: MODEL });
      const { json } = await c.createTask(MODEL, { prompt: "slow download" });
      rec = await c.waitRecord(json.data.taskId, 20_000);
      await Bun.sleep(1500); // room for a late duplicate step (a lapsed lease is claimed within a round)
    } finally {
      await Promise.all(engines.map((e) => e.stop()));
    }
    expect(rec).toMatchObject({ state: "success", creditsConsumed: 20 });
    expect(calls.submits()).toBe(1);
    expect(calls.downloads()).toBe(1);
    await expectChargedOnce(rec.taskId);
    expect(await c.credits()).toMatchObject({ credits: 980, held_credits: 0 });
  }, 30_000);

  test("a task in flight is not claimed again by the same engine, even once its lease has lapsed", async () => {
    // A long lease, so the keeper does not move it during the test: the lapse is made by hand below.
    const media = await startMedia(gw.ctx, { MEDIA_LEASE_SECONDS: "60" }, { autostart: false });
    const engine = media.engine!;
    const calls = upstreamCalls();
    const c = client(gw, (await gw.account(1000)).key);
    try {
      gw.up.control.set({ polls: 0, fileDelayMs: 1500 }, { model: MODEL });
      const id = (await c.createTask(MODEL, { prompt: "in flight" })).json.data.taskId;
      await engine.tick(); // submit
      await engine.drain();
      await waitFor(async () => (await engine.tick()) > 0, 5000, "the poll step"); // poll: done, download starts
      await waitFor(() => calls.downloads() === 1, 5000, "the download");
      // The lease lapses while the step still runs (an extension came late): the task is due and unleased again.
      await gw.ctx.db.run(sql`update tasks set lease_until = ${Date.now() - 1} where id = ${id}`);
      expect(await engine.tick()).toBe(0);
      await engine.drain();
      expect(await c.record(id)).toMatchObject({ state: "success", creditsConsumed: 20 });
      expect(calls.polls()).toBe(1);
      expect(calls.downloads()).toBe(1);
      await expectChargedOnce(id);
    } finally {
      await media.stop();
    }
  });

  test("a step whose lease is taken over stops: the download is abandoned at the next extension, nothing is written", async () => {
    const log = capturedLog();
    const media = await startMedia({ ...gw.ctx, log: log.logger }, { MEDIA_LEASE_SECONDS: "1" });
    const calls = upstreamCalls();
    const c = client(gw, (await gw.account(1000)).key);
    try {
      gw.up.control.set({ polls: 0, fileDelayMs: 3000 }, { model: MODEL });
      const id = (await c.createTask(MODEL, { prompt: "taken over" })).json.data.taskId;
      await waitFor(() => calls.downloads() === 1, 5000, "the download");
      await gw.ctx.db.run(
        sql`update tasks set lease_owner = ${STOLEN_BY}, lease_until = ${Date.now() + 60_000} where id = ${id}`,
      );
      // The keeper extends every 333 ms: well before the 3 s download would have ended.
      const abandoned = await waitFor(
        () => log.lines.find((l) => l.msg === "task taken over during a step; step abandoned"),
        1500,
        "the step to stop",
      );
      expect(abandoned.fields.task_id).toBe(id);
      expect(await taskRow(id)).toMatchObject({ state: "generating", lease_owner: STOLEN_BY });
      expect(await gw.ctx.db.all(sql`select id from result_files where task_id = ${id}`)).toEqual([]);
      expect((await ledgerOf(gw, id)).hold.status).toBe("pending");
    } finally {
      await media.stop();
    }
  });
});

describe("recording an accepted submission", () => {
  test("a task taken over between submit and record: the orphaned upstream job is logged by task and ref, not recorded", async () => {
    const log = capturedLog();
    const media = await startMedia({ ...gw.ctx, log: log.logger }, {}, { autostart: false });
    const engine = media.engine!;
    const c = client(gw, (await gw.account(1000)).key);
    try {
      const id = (await c.createTask(MODEL, { prompt: "stolen at submit" })).json.data.taskId;
      // Another worker takes the task while its upstream is accepting the submission.
      gw.up.control.set(
        {
          onAccepted: async () =>
            void (await gw.ctx.db.run(
              sql`update tasks set lease_owner = ${STOLEN_BY}, lease_until = ${Date.now() + 60_000} where id = ${id}`,
            )),
        },
        { model: MODEL },
      );
      await engine.tick();
      await engine.drain();
      const fake = [...gw.up.control.tasks.values()].find((t) => (t.input as any).prompt === "stolen at submit")!;
      expect(log.lines).toContainEqual({
        level: "warn",
        msg: "task taken over while its upstream accepted it; upstream job orphaned",
        fields: { task_id: id, provider: "kie", upstream_ref: fake.id },
      });
      expect(log.lines.filter((l) => l.msg === "task submitted")).toEqual([]);
      // Still waiting, with the mark of the submission under way: its new owner knows it may submit a duplicate.
      expect(await taskRow(id)).toMatchObject({
        state: "waiting",
        lease_owner: STOLEN_BY,
        upstream_ref: "submitting:0:kie",
      });
      expect(JSON.stringify(log.lines)).not.toContain(gw.up.keys.kie);
    } finally {
      await media.stop();
    }
  });
});
