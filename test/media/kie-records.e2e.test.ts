// kie's record of a finished task is final: one that says `success` with a resultJson that is not JSON will say so at
// every poll. The task fails at once, refunded, instead of being polled (and the caller kept waiting) until its
// deadline.
import { afterAll, expect, test } from "bun:test";
import { client, ledgerOf, startMediaGateway } from "./support";

let polls = 0;
const kie = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    if (new URL(req.url).pathname === "/api/v1/jobs/createTask")
      return Response.json({ code: 200, msg: "success", data: { taskId: "up-1" } });
    polls++;
    return Response.json({
      code: 200,
      msg: "success",
      data: { taskId: "up-1", state: "success", resultJson: '{"resultUrls": ["https://cdn.example/a.png"' },
    });
  },
});
const gw = await startMediaGateway({ MEDIA_WORKERS: "0", KIE_BASE_URL: `http://127.0.0.1:${kie.port}` });
afterAll(async () => {
  await gw.stop();
  kie.stop(true);
});

test("a success record whose resultJson is not JSON fails the task at its first poll, refunded", async () => {
  const { key } = await gw.account(1000);
  const c = client(gw, key);
  const { json } = await c.createTask("z-image", { prompt: "x" });
  const rec = await c.waitRecord(json.data.taskId, 5_000); // the model's deadline is 600 s
  expect(rec).toMatchObject({ state: "fail", failCode: "malformed_result", creditsConsumed: 0 });
  expect(rec.failMsg).toContain("nothing was charged");
  expect(polls).toBe(1);
  expect((await ledgerOf(gw, json.data.taskId)).hold.status).toBe("voided");
  expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
});
