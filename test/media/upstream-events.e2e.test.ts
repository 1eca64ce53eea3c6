// POST /v1/media/upstream-events/{provider}: an upstream's completion notice (kie Suno's callBackUrl). Public, so it
// is never trusted for results: it only brings the named task's next poll forward, and finds the task by index.
import { afterAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, startMediaGateway, waitFor } from "./support";

const gw = await startMediaGateway();
afterAll(() => gw.stop());

const notice = (ref: unknown) =>
  fetch(gw.url + "/v1/media/upstream-events/kie", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: 200, data: { task_id: ref } }),
  });

test("a notice brings the task's next poll forward; an unknown or malformed one changes nothing and still gets 200", async () => {
  const { key } = await gw.account(1000);
  const c = client(gw, key);
  const prompt = `notice ${crypto.randomUUID()}`;
  const { json } = await c.createTask("google/nano-banana", { prompt });
  const id = json.data.taskId;
  const fake = await waitFor(
    () => [...gw.up.control.tasks.values()].find((t) => (t.input as any).prompt === prompt),
    5000,
    "submission",
  );
  gw.up.control.update(fake.id, { never: true });
  const row = await waitFor(
    async () =>
      gw.ctx.db.get<{ upstream_ref: string; state: string }>(
        sql`select upstream_ref, state from tasks where id = ${id} and state = ${"generating"}`,
      ),
    5000,
    "generating",
  );
  const later = Date.now() + 3_600_000;
  await gw.ctx.db.run(sql`update tasks set next_poll_at = ${later} where id = ${id}`);
  const nextPoll = async () =>
    (await gw.ctx.db.get<{ next_poll_at: number }>(sql`select next_poll_at from tasks where id = ${id}`))!.next_poll_at;

  for (const junk of ["no-such-ref", 42, null]) {
    const r = await notice(junk);
    expect(r.status).toBe(200);
    expect(await nextPoll()).toBe(later);
  }
  const before = Date.now();
  expect((await notice(row!.upstream_ref)).status).toBe(200);
  expect(await nextPoll()).toBeLessThanOrEqual(Date.now());
  expect(await nextPoll()).toBeGreaterThanOrEqual(before - 1);
  gw.up.control.update(fake.id, { never: false, polls: 0 });
  expect((await c.waitRecord(id)).state).toBe("success");
});

test("the notice's lookup uses the tasks_upstream_ref index (the endpoint is public: no table scan per notice)", async () => {
  if (gw.ctx.db.dialect !== "sqlite") return;
  const plan = await gw.ctx.db.all<{ detail: string }>(
    sql`explain query plan update tasks set next_poll_at = ${1} where upstream_ref = ${"x"} and state = ${"generating"}`,
  );
  expect(plan.map((p) => p.detail).join("\n")).toContain("INDEX tasks_upstream_ref");
});
