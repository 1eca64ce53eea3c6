// An upstream's API answers (a submission's, a poll's) are read up to a bound: an upstream that answers with an
// endless or huge body must not make the gateway buffer it for the whole request timeout (60 s, gigabytes at local
// speed; before the bound a test process was OOM-killed at 23 GB). The task is retried like after any transient poll
// error, and refunded at its deadline.
import { afterAll, expect, test } from "bun:test";
import { type AddressInfo, createServer } from "node:net";
import { client, ledgerOf, startMediaGateway } from "./support";

const MB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20); // JSON whitespace: a body that never becomes an answer
/** The fake stops at 256 MB, so the test fails (rather than exhausting the machine) on a gateway without a bound. */
const STOP_AT = 256 * MB;
/** The most bytes one answer got into the gateway's connection before the gateway hung up. */
let largestRead = 0;

// Plain TCP, to send only what the gateway reads (a write waits for the socket to drain) and see when it hangs up.
const hostile = createServer((socket) => {
  socket.once("data", (head) => {
    if (head.toString().startsWith("POST /api/v1/jobs/createTask")) {
      const body = JSON.stringify({ code: 200, msg: "success", data: { taskId: "up-1" } });
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      return;
    }
    // recordInfo: an answer without a length that does not end (as far as the gateway keeps reading).
    socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n");
    let sent = 0;
    const more = () => {
      while (!socket.destroyed && sent < STOP_AT) {
        sent += CHUNK.byteLength;
        largestRead = Math.max(largestRead, sent);
        if (!socket.write(CHUNK)) return void socket.once("drain", more);
      }
      socket.end();
    };
    more();
  });
  socket.on("error", () => {});
});
await new Promise<void>((r) => hostile.listen(0, "127.0.0.1", r));
const port = (hostile.address() as AddressInfo).port;

const gw = await startMediaGateway({
  MEDIA_WORKERS: "0",
  MEDIA_MAX_DEADLINE_SECONDS: "3",
  KIE_BASE_URL: `http://127.0.0.1:${port}`,
});
afterAll(async () => {
  await gw.stop();
  hostile.close();
});

test("an endless poll answer is cut at a bound; the task fails at its deadline, refunded", async () => {
  const { key } = await gw.account(1000);
  const c = client(gw, key);
  const { json } = await c.createTask("z-image", { prompt: "x" });
  const rec = await c.waitRecord(json.data.taskId, 10_000);
  expect(rec).toMatchObject({ state: "fail", failCode: "deadline_exceeded", creditsConsumed: 0 });
  expect((await ledgerOf(gw, json.data.taskId)).hold.status).toBe("voided");
  expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
  // Each poll stopped reading at the bound (plus what was in flight when it was reached).
  expect(largestRead).toBeLessThan(64 * MB);
}, 20_000);
