import { afterAll, beforeAll } from "bun:test";
import { buildApp } from "../../src/app";
import { closeContext, createContext } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { serverLimitOf } from "../../src/http/body-limits";
import type { AppContext } from "../../src/context";
import { silentLogger, type Logger } from "../../src/log";
import { databaseFor, tempSqlitePath } from "./services";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface TestGateway {
  url: string;
  ctx: AppContext;
  app: ReturnType<typeof buildApp>;
  /** An account with `credits` and one key (limits overridable); returns the plaintext key. */
  account(
    credits?: number,
    keyOpts?: { rateRequests?: number; rateWindowSeconds?: number; maxConcurrentTasks?: number },
  ): Promise<{ accountId: string; key: string; keyId: string }>;
  admin(path: string, init?: RequestInit): Promise<Response>;
  /** A caller's JSON POST with `key` as its bearer; `headers` add or replace. */
  post(key: string, path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  stop(): Promise<void>;
}

/** A gateway on a random port with its own database (SQLite temp file unless DATABASE_URL is given). */
/** `log`: where the gateway logs (silent by default; createLogger with a sink to read what it logged). */
/**
 * A gateway on a fresh database of `dialect` for the describe block that calls this (started before its tests,
 * stopped and its database dropped after them).
 */
export function useGatewayOn(dialect: "sqlite" | "pg", env: Record<string, string>): { readonly gw: TestGateway } {
  let gw: TestGateway | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const db = await databaseFor(dialect);
    drop = db.drop;
    gw = await startGateway({ DATABASE_URL: db.url, ...env });
  });
  afterAll(async () => {
    await gw?.stop();
    await drop?.();
  });
  return {
    get gw() {
      if (!gw) throw new Error("the gateway starts in beforeAll");
      return gw;
    },
  };
}

export async function startGateway(env: Record<string, string> = {}, log: Logger = silentLogger): Promise<TestGateway> {
  const config = loadConfig({
    DATABASE_URL: tempSqlitePath(),
    ADMIN_TOKEN,
    PORT: "0",
    DEFAULT_RATE_LIMIT: "1000/10s",
    LEDGER_FLOAT_IDLE_MS: "20",
    CATALOG_DAY: process.env.CATALOG_DAY!, // test/support/preload.ts
    ...env,
  });
  const ctx = await createContext(config, log);
  const app = buildApp(ctx).listen({ port: 0, hostname: "127.0.0.1", maxRequestBodySize: serverLimitOf(config.body) }); // as src/server.ts
  const url = `http://127.0.0.1:${app.server!.port}`;
  return {
    url,
    ctx,
    app,
    async account(credits = 1000, keyOpts = {}) {
      const { creditsToMicros } = await import("../../src/ledger/units");
      const a = await ctx.accounts.createAccount("test", creditsToMicros(credits));
      const k = await ctx.accounts.createKey(a.id, { name: "test", ...keyOpts });
      return { accountId: a.id, key: k.key, keyId: k.id };
    },
    admin(path, init = {}) {
      return fetch(url + path, {
        ...init,
        headers: {
          authorization: `Bearer ${ADMIN_TOKEN}`,
          "content-type": "application/json",
          ...(init.headers as any),
        },
      });
    },
    post(key, path, body, headers = {}) {
      return fetch(url + path, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    },
    async stop() {
      await app.stop(true);
      await closeContext(ctx);
    },
  };
}

/**
 * `work` run with the gateway's access-log lines (`request`) collected into `lines`, whatever LOG_LEVEL says; the
 * logger is put back after.
 */
export async function withAccessLog<T>(gw: TestGateway, work: (lines: any[]) => Promise<T>): Promise<T> {
  const lines: any[] = [];
  const log = gw.ctx.log;
  (gw.ctx as any).log = {
    ...log,
    enabled: () => true,
    info: (msg: string, fields: any) => msg === "request" && lines.push(fields),
  };
  try {
    return await work(lines);
  } finally {
    (gw.ctx as any).log = log;
  }
}
