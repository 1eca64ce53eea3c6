// A request body over MAX_REQUEST_BODY_MB gets 413 request_too_large in the caller's protocol, never Bun's own empty
// 413 (which the SDKs report as an unknown error): refused from its content-length before anything is read, or, sent
// chunked, as soon as what arrived passes the limit. Nothing is held, charged, recorded or sent upstream.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, type TestGateway } from "../support/gateway";
import { errorOf } from "../support/json";

const MB = 1024 ** 2;
let gw: TestGateway;
let key: string;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway({
    MAX_REQUEST_BODY_MB: "1",
    OPENAI_API_KEY: "sk-x",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    ANTHROPIC_API_KEY: "sk-x",
    ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
  });
  ({ key, accountId } = await gw.account(100));
});
afterAll(() => gw.stop());

/** A JSON body of about `bytes` bytes: a chat request whose one message is that long. */
const bodyOf = (bytes: number, model = "gpt-5.2") =>
  JSON.stringify({ model, max_tokens: 10, messages: [{ role: "user", content: "x".repeat(bytes) }] });

/** The same bytes sent chunked (no content-length), 64 KiB at a time. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.subarray(at, at + 64 * 1024));
      at += 64 * 1024;
    },
  });
}

const post = (path: string, body: Bun.BodyInit, headers: Record<string, string> = {}) =>
  fetch(gw.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body,
  });

async function expectNothingMoved() {
  expect(await gw.ctx.db.all(sql`select id from usage_records where account_id = ${accountId}`)).toEqual([]);
  expect(await gw.ctx.db.get<any>(sql`select balance, held from wallets where account_id = ${accountId}`)).toEqual({
    balance: 100_000_000,
    held: 0,
  });
}

test("Chat Completions: 413 in the OpenAI error shape, from the content-length or counted while chunked", async () => {
  for (const body of [bodyOf(2 * MB), chunked(bodyOf(2 * MB))]) {
    const r = await post("/v1/chat/completions", body);
    expect(r.status).toBe(413);
    expect((await errorOf(r)).error).toMatchObject({
      type: "invalid_request_error",
      code: "request_too_large",
      message: expect.stringContaining("1 MiB"),
    });
  }
  await expectNothingMoved();
});

test("Anthropic Messages: 413 as Anthropic's request_too_large error", async () => {
  const r = await post("/v1/messages", bodyOf(2 * MB, "claude-sonnet-4-5"), {
    "x-api-key": key,
    "anthropic-version": "2023-06-01",
  });
  expect(r.status).toBe(413);
  expect(await r.json()).toMatchObject({ type: "error", error: { type: "request_too_large" } });
  await expectNothingMoved();
});

test("a body just under the limit is read as usual (here, refused only because its upstream is unreachable)", async () => {
  const rich = await gw.account(100_000); // its hold, for a million characters of input, is above 100 credits
  const body = bodyOf(MB - 1000);
  expect(new TextEncoder().encode(body).byteLength).toBeLessThanOrEqual(MB);
  for (const b of [body, chunked(body)]) {
    const r = await post("/v1/chat/completions", b, { authorization: `Bearer ${rich.key}` });
    expect(r.status).not.toBe(413);
    expect(r.status).toBeGreaterThanOrEqual(500); // nothing listens on the upstream's port
    expect((await errorOf(r)).error.code).not.toBe("request_too_large");
  }
});

test("the media task API (its own shape), the public estimate and the dashboard's sign-in form: 413", async () => {
  const big = JSON.stringify({ model: "google/nano-banana", input: { prompt: "x".repeat(2 * MB) } });
  const task = await post("/api/v1/jobs/createTask", big);
  expect(task.status).toBe(413);
  expect(await task.json()).toMatchObject({ code: 413, error_code: "request_too_large", data: null });
  const estimate = await post("/v1/credits/estimate", big);
  expect(estimate.status).toBe(413);
  expect((await errorOf(estimate)).error).toMatchObject({ code: "request_too_large" });
  const login = await fetch(gw.url + "/dashboard/login", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "email=a%40b.c&password=" + "x".repeat(2 * MB),
  });
  expect(login.status).toBe(413);
  await expectNothingMoved();
});

test("a content-length far beyond the limit is answered at once, by the gateway, without waiting for the body", async () => {
  // Over a raw socket: the headers claim 500 MB and no byte of the body follows. (Past Bun's own limit, a backstop
  // at 4x ours and at least 1 GiB, Bun answers an empty 413 itself.)
  const chunks: Buffer[] = [];
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(gw.url).port),
    socket: { data: (_s, d) => void chunks.push(Buffer.from(d)) },
  });
  const started = performance.now();
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 500000000\r\n\r\n`,
  );
  for (let i = 0; i < 100 && !Buffer.concat(chunks).includes("}"); i++) await Bun.sleep(20);
  socket.end();
  const text = Buffer.concat(chunks).toString();
  expect(text).toStartWith("HTTP/1.1 413");
  expect(text).toContain('"request_too_large"');
  expect(performance.now() - started).toBeLessThan(1500);
});
