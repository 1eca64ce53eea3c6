// An upstream that answers a new submission with the id of a job it gave another task (a bug, a replayed answer) would
// have the second task polled to the first one's result: another account's image, charged again. The second task
// fails instead (upstream_ref_reused, refunded) and never sees the first one's files.
import { afterAll, expect, test } from "bun:test";
import { client, ledgerOf, startMediaGateway } from "./support";

const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
  (ch) => ch.charCodeAt(0),
);
const kie = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const { pathname, origin } = new URL(req.url);
    if (pathname === "/api/v1/jobs/createTask")
      return Response.json({ code: 200, msg: "success", data: { taskId: "always-the-same" } });
    if (pathname === "/file.png") return new Response(PNG, { headers: { "content-type": "image/png" } });
    return Response.json({
      code: 200,
      msg: "success",
      data: {
        taskId: "always-the-same",
        state: "success",
        resultJson: JSON.stringify({ resultUrls: [`${origin}/file.png`] }),
      },
    });
  },
});
const gw = await startMediaGateway({ MEDIA_WORKERS: "0", KIE_BASE_URL: `http://127.0.0.1:${kie.port}` });
afterAll(async () => {
  await gw.stop();
  kie.stop(true);
});

test("a job id the upstream already gave another task fails the new task, refunded, without the other's result", async () => {
  const first = client(gw, (await gw.account(1000)).key);
  const a = (await first.createTask("z-image", { prompt: "mine" })).json.data.taskId;
  expect(await first.waitRecord(a)).toMatchObject({ state: "success" });

  const second = client(gw, (await gw.account(1000)).key);
  const b = (await second.createTask("z-image", { prompt: "yours" })).json.data.taskId;
  const rec = await second.waitRecord(b);
  expect(rec).toMatchObject({ state: "fail", failCode: "upstream_ref_reused", creditsConsumed: 0, resultJson: "" });
  expect((await ledgerOf(gw, b)).hold.status).toBe("voided");
  expect(await second.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
});
