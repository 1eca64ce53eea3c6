// Helpers of the media tests: a gateway with its media engine pointed at the fake upstreams, a callback receiver,
// and small clients for both front doors. Signatures are checked here with node:crypto, independently of the
// gateway's signing code.
import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "bun:test";
import { sql } from "drizzle-orm";
import { RedisUnavailableError } from "../../src/limits/redis-connection";
import { startMedia, type MediaRuntime } from "../../src/media/workers";
import { startFakeMediaUpstreams, type FakeMediaUpstreams } from "../fakes/media/index";
import type { Logger } from "../../src/log";
import { startGateway, type TestGateway } from "../support/gateway";

export interface Received {
  headers: Record<string, string>;
  body: any;
  at: number;
}

export function startReceiver() {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      received.push({
        headers: Object.fromEntries(req.headers),
        body: await req.json().catch(() => null),
        at: Date.now(),
      });
      return new Response("ok", { status: statuses.shift() ?? 200 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    received,
    /** Answer the next calls with these statuses (then 200). */
    failNext: (...s: number[]) => statuses.push(...s),
    stop: () => server.stop(true),
  };
}

export const FAST_ENV = {
  CALLBACK_ALLOW_PRIVATE: "true",
  MEDIA_POLL_SCALE: "0.005",
  MEDIA_HOUSEKEEPING_SECONDS: "1",
  CALLBACK_RETRY_BASE_MS: "50",
  LOG_LEVEL: "error",
};

export interface MediaGateway extends TestGateway {
  up: FakeMediaUpstreams;
  media: MediaRuntime;
  storageDir: string;
}

/**
 * A gateway + media engine (real Bun Workers unless MEDIA_WORKERS=0) against fresh fake upstreams. With
 * `autostart: false` (in-process mode) the engine only moves when the test calls its tick().
 */
export async function startMediaGateway(
  env: Record<string, string> = {},
  opts: { autostart?: boolean; log?: Logger } = {},
): Promise<MediaGateway> {
  const up = startFakeMediaUpstreams();
  const storageDir = mkdtempSync(join(tmpdir(), "sy-files-"));
  // OpenAI shut gpt-image-1 down (the built-in catalog retires it); the fake OpenAI Images upstream still serves it.
  const catalog = new URL("../support/openai-images-catalog.json", import.meta.url).pathname;
  const gw = await startGateway(
    { ...up.env, STORAGE_DIR: storageDir, ...FAST_ENV, CATALOG_PATH: catalog, ...env },
    opts.log,
  );
  gw.ctx.config.publicBaseUrl = gw.url; // the port is only known after listen
  const media = await startMedia(gw.ctx, {}, opts);
  const stop = gw.stop;
  return {
    ...gw,
    up,
    media,
    storageDir,
    async stop() {
      await media.stop();
      await stop();
      await up.stop();
    },
  };
}

export function client(gw: { url: string }, key: string) {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(gw.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as any };
  };
  return {
    call,
    createTask: (model: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      call("POST", "/api/v1/jobs/createTask", { model, input, ...extra }),
    record: async (taskId: string) => (await call("GET", `/api/v1/jobs/recordInfo?taskId=${taskId}`)).json.data,
    /** Poll recordInfo until the state is final. */
    async waitRecord(taskId: string, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const r = await call("GET", `/api/v1/jobs/recordInfo?taskId=${taskId}`);
        if (r.json.data?.state === "success" || r.json.data?.state === "fail") return r.json.data;
        await Bun.sleep(30);
      }
      throw new Error(`task ${taskId} did not finish`);
    },
    async waitStatus(taskId: string, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const r = await call("GET", `/v1/tasks/${taskId}`);
        if (r.json.status === "succeeded" || r.json.status === "failed") return r.json;
        await Bun.sleep(30);
      }
      throw new Error(`task ${taskId} did not finish`);
    },
    credits: async () => (await call("GET", "/v1/credits")).json as { credits: number; held_credits: number },
  };
}

export async function waitFor<T>(
  fn: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    await Bun.sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The receiver's view of a signature: HMAC-SHA256(key, "<taskId>.<timestamp>"), base64, compared in constant time. */
export function verifySignature(secret: string, r: Received): boolean {
  const ts = r.headers["x-webhook-timestamp"];
  const sig = r.headers["x-webhook-signature"];
  if (!ts || !sig || !/^\d+$/.test(ts)) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${r.body.taskId}.${ts}`).digest();
  const given = Buffer.from(sig, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Ledger rows of a task: its hold and the entries posted against it. */
export async function ledgerOf(gw: TestGateway, taskId: string) {
  const hold = await gw.ctx.db.get<any>(sql`select * from holds where ref = ${taskId} and kind = ${"task"}`);
  const entries = hold ? await gw.ctx.db.all<any>(sql`select * from entries where hold_id = ${hold.id}`) : [];
  return { hold, entries };
}

/**
 * Runs one task of `c` to success while the gateway refuses every token release (Redis away), until a release has
 * been tried again after its first refusal; releases work again once it returns.
 */
export async function succeedWhileReleasesRefused(gw: TestGateway, c: ReturnType<typeof client>): Promise<void> {
  const tokens = gw.ctx.taskTokens;
  const release = tokens.release;
  let refused = 0;
  tokens.release = async () => {
    refused++;
    throw new RedisUnavailableError("Redis is not connected");
  };
  try {
    const { json } = await c.createTask("z-image", { prompt: "x" });
    expect(await c.waitRecord(json.data.taskId)).toMatchObject({ state: "success" });
    await waitFor(() => refused >= 2, 5000, "the release to be tried again");
  } finally {
    tokens.release = release;
  }
}
