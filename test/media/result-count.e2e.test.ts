// An upstream's result lists the files to copy; one listing hundreds (a bug, a hostile upstream) would have the gateway
// download and store every one, each up to RESULT_MAX_FILE_MB, for a task charged at most its estimate. The gateway
// copies at most 16 (no model makes more than 10), and says so in its log.
import { afterAll, expect, test } from "bun:test";
import { client, startMediaGateway } from "./support";

const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
  (ch) => ch.charCodeAt(0),
);
let downloads = 0;
const kie = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const { pathname, origin } = new URL(req.url);
    if (pathname === "/api/v1/jobs/createTask")
      return Response.json({ code: 200, msg: "success", data: { taskId: `up-${Math.random()}` } });
    if (pathname.startsWith("/file-")) {
      downloads++;
      return new Response(PNG, { headers: { "content-type": "image/png" } });
    }
    const resultUrls = Array.from({ length: 300 }, (_, i) => `${origin}/file-${i}.png`);
    return Response.json({
      code: 200,
      msg: "success",
      data: { state: "success", resultJson: JSON.stringify({ resultUrls }) },
    });
  },
});
const gw = await startMediaGateway({ MEDIA_WORKERS: "0", KIE_BASE_URL: `http://127.0.0.1:${kie.port}` });
afterAll(async () => {
  await gw.stop();
  kie.stop(true);
});

test("a result listing 300 files has at most 16 copied", async () => {
  const c = client(gw, (await gw.account(1000)).key);
  const { json } = await c.createTask("z-image", { prompt: "x" });
  const rec = await c.waitRecord(json.data.taskId);
  expect(rec.state).toBe("success");
  expect(JSON.parse(rec.resultJson).resultUrls.length).toBe(16);
  expect(downloads).toBe(16);
  expect(rec.creditsConsumed).toBeLessThanOrEqual(rec.estimatedCredits);
});
