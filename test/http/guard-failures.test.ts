// Guards that run before a body is read (http/before-body.ts) run inside Elysia's parse phase, which wraps whatever
// they throw in its ParseError. A guard failing for the gateway's own reason (its database, its limiter) is a 500,
// logged with its cause, as it is on a GET: not "400 invalid_json", which blamed the caller and logged nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Users } from "../../src/dashboard/users";
import { createLogger } from "../../src/log";
import { startGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
const logged: any[] = [];
beforeAll(async () => {
  gw = await startGateway(
    {},
    createLogger("info", (line) => void logged.push(JSON.parse(line))),
  );
});
afterAll(() => gw.stop());

/** `fn` with `obj[name]` throwing `message`; then the "unhandled error" lines logged meanwhile. */
async function failing<T extends object>(obj: T, name: keyof T, message: string, fn: () => Promise<void>) {
  const real = obj[name];
  (obj as any)[name] = async () => {
    throw new Error(message);
  };
  const from = logged.length;
  try {
    await fn();
  } finally {
    (obj as any)[name] = real;
  }
  return logged.slice(from).filter((l) => l.msg === "unhandled error" && String(l.error).includes(message));
}

describe("a guard's own failure before the body is read", () => {
  test("the API key lookup of a media task post: 500 internal_error in the task envelope, logged", async () => {
    const { key } = await gw.account(100);
    let status = 0;
    let body: any;
    const lines = await failing(gw.ctx.accounts, "authenticate", "key store is down", async () => {
      const r = await fetch(gw.url + "/api/v1/jobs/createTask", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "x", input: {} }),
      });
      [status, body] = [r.status, await r.json()];
    });
    expect(status).toBe(500);
    expect(body).toMatchObject({ code: 500 });
    expect(lines).toHaveLength(1);
  });

  test("the public limit of the estimate endpoint: 500, logged", async () => {
    let status = 0;
    const lines = await failing(gw.ctx.limiter, "limit", "limiter is down", async () => {
      const r = await fetch(gw.url + "/v1/credits/estimate", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "kling-3.0/video", duration: 5 }),
      });
      status = r.status;
    });
    expect(status).toBe(500);
    expect(lines).toHaveLength(1);
  });

  test("the session lookup of a dashboard form post: a 500 page, logged", async () => {
    let status = 0;
    const lines = await failing(Users.prototype, "session", "sessions are down", async () => {
      const r = await fetch(gw.url + "/dashboard/settings/api-keys", {
        method: "POST",
        headers: { cookie: "sy_session=abc", origin: gw.url },
        body: new URLSearchParams({ name: "x" }),
      });
      status = r.status;
    });
    expect(status).toBe(500);
    expect(lines).toHaveLength(1);
  });

  test("a body that is not JSON is still the caller's 400 invalid_json", async () => {
    const { key } = await gw.account(100);
    const r = await fetch(gw.url + "/api/v1/jobs/createTask", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ code: 400 });
  });
});
