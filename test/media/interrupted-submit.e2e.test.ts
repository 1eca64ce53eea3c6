// A process that dies while an upstream is accepting a task leaves a job the gateway never hears of; the task's next
// owner submits it again, and the operator pays twice. None of the media upstreams documents an idempotency key, so
// the engine marks each submission on the task row before sending it: the next owner finding the mark logs the
// possible duplicate (with the upstream ids it knows) and counts it in switchyard_upstream_errors_total.
import { afterAll, beforeEach, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Logger } from "../../src/log";
import { startMedia } from "../../src/media/workers";
import { client, startMediaGateway, waitFor } from "./support";

const gw = await startMediaGateway({ MEDIA_WORKERS: "0" }, { autostart: false });
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

const MODEL = "google/nano-banana"; // one kie route

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

const duplicates = async () => {
  const text = await (await fetch(gw.url + "/metrics")).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith('switchyard_upstream_errors_total{provider="kie",kind="possible_duplicate"}'));
  return line ? Number(line.split(" ").pop()) : 0;
};

test("a submission cut short by the owner's death: the next owner's resubmission is logged with both upstream ids and counted", async () => {
  const log = capturedLog();
  const first = await startMedia({ ...gw.ctx, log: log.logger }, {}, { autostart: false });
  const second = await startMedia({ ...gw.ctx, log: log.logger }, {}, { autostart: false });
  const c = client(gw, (await gw.account(1000)).key);
  const before = await duplicates();
  let letFirstGo = () => {};
  try {
    const id = (await c.createTask(MODEL, { prompt: "cut short" })).json.data.taskId;
    // The first owner's upstream accepts the job; the owner dies before hearing the answer (its lease lapses).
    let accepted = false;
    gw.up.control.once(
      {
        onAccepted: async () => {
          accepted = true;
          await gw.ctx.db.run(
            sql`update tasks set lease_owner = ${"dead-process"}, lease_until = ${0} where id = ${id}`,
          );
          await new Promise<void>((r) => (letFirstGo = r));
        },
      },
      { model: MODEL },
    );
    await first.engine!.tick();
    await waitFor(() => accepted, 5000, "the first submission to be accepted");
    await second.engine!.tick();
    await second.engine!.drain();
    const jobs = [...gw.up.control.tasks.values()].filter((t) => (t.input as any).prompt === "cut short");
    expect(jobs).toHaveLength(2); // the duplicate this test is about: the upstream runs the task twice
    const [firstJob, secondJob] = jobs;
    const warned = log.lines.find(
      (l) => l.msg === "task submitted again after an interrupted submission; the upstream may run it twice",
    );
    expect(warned?.fields).toMatchObject({
      task_id: id,
      provider: "kie",
      upstream_ref: secondJob!.id,
      previous_provider: "kie",
    });
    expect(log.lines.find((l) => l.msg.startsWith("task found with an interrupted submission"))?.fields).toEqual({
      task_id: id,
      previous_provider: "kie",
    });
    expect(await duplicates()).toBe(before + 1);
    // The first owner, should it still run, logs the job it got: both ids are in the log.
    letFirstGo();
    await first.engine!.drain();
    expect(log.lines).toContainEqual({
      level: "warn",
      msg: "task taken over while its upstream accepted it; upstream job orphaned",
      fields: { task_id: id, provider: "kie", upstream_ref: firstJob!.id },
    });
  } finally {
    letFirstGo();
    await first.stop();
    await second.stop();
  }
});

test("a task submitted once is not reported as a duplicate", async () => {
  const log = capturedLog();
  const media = await startMedia({ ...gw.ctx, log: log.logger }, {}, { autostart: false });
  const c = client(gw, (await gw.account(1000)).key);
  const before = await duplicates();
  try {
    const id = (await c.createTask(MODEL, { prompt: "once" })).json.data.taskId;
    await waitFor(
      async () => {
        await media.engine!.tick();
        await media.engine!.drain();
        return (await c.record(id)).state === "success";
      },
      10_000,
      "the task to succeed",
    );
  } finally {
    await media.stop();
  }
  expect(log.lines.filter((l) => l.msg.includes("interrupted submission"))).toEqual([]);
  expect(await duplicates()).toBe(before);
});

test("an accepted submission the database fails to record: the upstream's id is logged before the task is retried", async () => {
  const log = capturedLog();
  // The engine's database refuses the one statement after the upstream accepted the job: the row keeps its mark.
  let refuseNext = false;
  const db = Object.create(gw.ctx.db) as typeof gw.ctx.db;
  db.run = (query) => {
    if (!refuseNext) return gw.ctx.db.run(query);
    refuseNext = false;
    return Promise.reject(new Error("connection reset"));
  };
  const media = await startMedia({ ...gw.ctx, db, log: log.logger }, {}, { autostart: false });
  const c = client(gw, (await gw.account(1000)).key);
  try {
    const id = (await c.createTask(MODEL, { prompt: "unrecorded" })).json.data.taskId;
    gw.up.control.once({ onAccepted: async () => void (refuseNext = true) }, { model: MODEL });
    await media.engine!.tick();
    await media.engine!.drain();
    const [job] = [...gw.up.control.tasks.values()].filter((t) => (t.input as any).prompt === "unrecorded");
    expect(job).toBeDefined();
    expect(log.lines.find((l) => l.fields?.upstream_ref === job!.id)?.fields).toMatchObject({
      task_id: id,
      provider: "kie",
    });
  } finally {
    await media.stop();
  }
});
