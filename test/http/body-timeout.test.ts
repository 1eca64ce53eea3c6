// A request whose body stalls after its headers gets 408 request_timeout within REQUEST_BODY_TIMEOUT_SECONDS, in the
// caller's protocol shape, instead of holding a connection and a handler until Bun's idle timeout (255 s): on the
// public estimate endpoint (no key), an LLM endpoint (nothing charged, nothing sent upstream), a media task route,
// and the dashboard's sign-in form. Beyond that base deadline a body is given time for the bytes that have arrived
// (a second per 64 KiB), not for the length it claims. Sent over a raw TCP socket, since fetch always finishes its
// bodies.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { ADMIN_TOKEN, startGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
let key: string;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway({
    REQUEST_BODY_TIMEOUT_SECONDS: "1",
    OPENAI_API_KEY: "sk-x",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
  });
  ({ key, accountId } = await gw.account(100));
});
afterAll(() => gw.stop());

/** Sends the headers and the first part of a body that claims 100 bytes; returns what came back, and when. */
async function stalled(path: string, contentType: string, part: string, headers: Record<string, string> = {}) {
  return sendSlowly(path, contentType, [part], 0, { "content-length": "100", ...headers });
}

/** Sends the headers, then `parts` `gapMs` apart; returns what came back, and when. */
async function sendSlowly(
  path: string,
  contentType: string,
  parts: string[],
  gapMs: number,
  headers: Record<string, string>,
) {
  const port = new URL(gw.url).port;
  const chunks: Buffer[] = [];
  const started = performance.now();
  let closedAt = 0;
  let done: () => void = () => {};
  const closed = new Promise<void>((r) => (done = r));
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port: Number(port),
    socket: {
      data: (_s, d) => void chunks.push(Buffer.from(d)),
      close: () => {
        closedAt = performance.now();
        done();
      },
    },
  });
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\n${extra}\r\n`);
  for (const [i, part] of parts.entries()) {
    if (i) await Bun.sleep(gapMs);
    socket.write(part);
  }
  // Wait for an answer (or 5 s, well past the 1 s deadline but far below Bun's idle timeout).
  for (let i = 0; i < 100 && !Buffer.concat(chunks).includes("\r\n\r\n"); i++) await Bun.sleep(50);
  await Promise.race([closed, Bun.sleep(300)]);
  const answeredAfter = performance.now() - started;
  socket.end();
  const text = Buffer.concat(chunks).toString();
  const [head, body] = [text.slice(0, text.indexOf("\r\n\r\n")), text.slice(text.indexOf("\r\n\r\n") + 4)];
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]), head, body, answeredAfter, closedAt };
}

test("the public estimate endpoint: 408 request_timeout after about a second, in the OpenAI error shape", async () => {
  const r = await stalled("/v1/credits/estimate", "application/json", '{"model":');
  expect(r.status).toBe(408);
  expect(r.answeredAfter).toBeGreaterThan(900);
  expect(r.answeredAfter).toBeLessThan(4000);
  expect(JSON.parse(r.body.slice(r.body.indexOf("{"), r.body.lastIndexOf("}") + 1)).error).toMatchObject({
    code: "request_timeout",
  });
}, 20_000); // each stalled request waits out the 1 s deadline, longer on a loaded machine

test("an LLM endpoint with a valid key: 408 in its protocol's shape; nothing held, charged or recorded", async () => {
  const auth = { authorization: `Bearer ${key}` };
  const chat = await stalled("/v1/chat/completions", "application/json", '{"model":"gpt-5.2","messages":[', auth);
  expect(chat.status).toBe(408);
  expect(chat.body).toContain('"request_timeout"');
  const messages = await stalled("/v1/messages", "application/json", '{"model":"claude-opus', auth);
  expect(messages.status).toBe(408);
  expect(messages.body).toContain('"type":"error"');
  expect(await gw.ctx.db.all(sql`select id from usage_records where account_id = ${accountId}`)).toEqual([]);
  expect(await gw.ctx.db.get<any>(sql`select balance, held from wallets where account_id = ${accountId}`)).toEqual({
    balance: 100_000_000,
    held: 0,
  });
}, 20_000); // each stalled request waits out the 1 s deadline, longer on a loaded machine

test("a media task route and the dashboard sign-in form: 408 too", async () => {
  const task = await stalled("/api/v1/jobs/createTask", "application/json", '{"model":"google/nano-banana"', {
    authorization: `Bearer ${key}`,
  });
  expect(task.status).toBe(408);
  expect(task.body).toContain('"code":408');
  // No Origin (the raw request's Host has no port, so gw.url would be another origin: refused before its body is read)
  const login = await stalled("/dashboard/login", "application/x-www-form-urlencoded", "email=a%40b.c&pass");
  expect(login.status).toBe(408);
}, 20_000); // each stalled request waits out the 1 s deadline, longer on a loaded machine

test("every content type is read under the deadline", async () => {
  for (const type of ["text/plain", "application/octet-stream", "application/xml", "multipart/form-data; boundary=x"]) {
    expect((await stalled("/v1/credits/estimate", type, "abc")).status).toBe(408);
  }
}, 20_000); // each stalled request waits out the 1 s deadline, longer on a loaded machine

test("a large body is given a second per 64 KiB it states: 256 KiB arriving over 2 s is read (base deadline 1 s)", async () => {
  const body = JSON.stringify({ model: "kling-3.0/video", duration: 5, pad: "x".repeat(256 * 1024) });
  const quarter = Math.ceil(body.length / 4);
  const parts = [0, 1, 2, 3].map((i) => body.slice(i * quarter, (i + 1) * quarter));
  const r = await sendSlowly("/v1/credits/estimate", "application/json", parts, 650, {
    "content-length": String(body.length),
  });
  // read whole and judged on its content (the padding is no field of the model's: 422 naming it), not a 408
  expect(r.status).toBe(422);
  expect(r.body).toContain("pad");
}, 20_000); // each stalled request waits out the 1 s deadline, longer on a loaded machine

test("a body stated far longer than what is sent gets its 408 after the base deadline, not after the stated length's", async () => {
  // 64 MiB stated would have bought 1 + 1024 s; 6 bytes sent buy nothing beyond the base second.
  const auth = { authorization: `Bearer ${key}` };
  const claims = { "content-length": String(64 * 1024 ** 2), ...auth };
  for (const path of ["/api/v1/jobs/createTask", "/v1/chat/completions"]) {
    const r = await sendSlowly(path, "application/json", ['{"mode'], 0, claims);
    expect(r.status).toBe(408);
    expect(r.answeredAfter).toBeLessThan(4000);
  }
  // a body that stops arriving part way gets only what its bytes bought: 128 KiB, two seconds more
  const part = '{"model":"google/nano-banana","pad":"' + "x".repeat(128 * 1024);
  const stopped = await sendSlowly("/api/v1/jobs/createTask", "application/json", [part], 0, claims);
  expect(stopped.status).toBe(408);
  expect(stopped.answeredAfter).toBeGreaterThan(2500);
  expect(stopped.answeredAfter).toBeLessThan(6000);
}, 20_000); // each stalled request waits out its deadline, longer on a loaded machine

test("a body over 1 MiB on a slow but steady uplink is read: 1.5 MiB over 2.5 s (base deadline 1 s), stated or chunked", async () => {
  const body = JSON.stringify({ model: "no-such-model", input: { prompt: "x".repeat(1.5 * 1024 ** 2) } });
  const sixth = Math.ceil(body.length / 6);
  const parts = [0, 1, 2, 3, 4, 5].map((i) => body.slice(i * sixth, (i + 1) * sixth));
  const auth = { authorization: `Bearer ${key}` };
  const stated = await sendSlowly("/api/v1/jobs/createTask", "application/json", parts, 500, {
    "content-length": String(body.length),
    ...auth,
  });
  const framed = [...parts.map((p) => `${p.length.toString(16)}\r\n${p}\r\n`), "0\r\n\r\n"];
  const chunked = await sendSlowly("/api/v1/jobs/createTask", "application/json", framed, 500, {
    "transfer-encoding": "chunked",
    ...auth,
  });
  for (const r of [stated, chunked]) {
    // read whole and judged on its content (no such model), not a 408
    expect(r.status).not.toBe(408);
    expect(r.body).toContain("no-such-model");
  }
}, 20_000);

test("a route that takes no body ignores an empty one, even chunked with a JSON content type", async () => {
  const r = await sendSlowly(`/admin/v1/accounts/${accountId}/webhook-key`, "application/json", ["0\r\n\r\n"], 0, {
    "transfer-encoding": "chunked",
    authorization: `Bearer ${ADMIN_TOKEN}`,
  });
  expect(r.status).toBe(201);
}, 20_000); // each stalled request waits out the 1 s deadline, longer on a loaded machine
