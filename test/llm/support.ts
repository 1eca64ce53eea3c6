// Shared set-up of the LLM end-to-end tests: a fake upstream serving every provider, a gateway pointed at it,
// and readers of the ledger (holds, entries, wallet) straight from the database — charges are checked there,
// never through the gateway's own metering code.

import { afterAll, beforeAll, beforeEach } from "bun:test";
import { sql } from "drizzle-orm";
import { startFakeLlmUpstream, type FakeLlmUpstream } from "../fakes/llm-upstream";
import { startGateway, type TestGateway } from "../support/gateway";

/** Catalog prices written out, µcr per token (USD per million × 1000), from src/catalog/models.json. */
export const PRICES = {
  "claude-opus-4-5": { input: 5000, output: 25000, cacheRead: 500, cacheWrite: 6250 },
  "gpt-5.2": { input: 1750, output: 14000, cacheRead: 175 },
  "gpt-4.1": { input: 2000, output: 8000, cacheRead: 500 },
  "text-embedding-3-small": { input: 20 },
  "deepseek-test": { input: 280, output: 420, cacheRead: 28 },
} as const;

export const MICROS = 1_000_000;

export interface Env {
  fake: FakeLlmUpstream;
  gw: TestGateway;
}

/** Every provider at the fake, with the base URL conventions of the vendors' SDKs. */
export function providerEnv(fakeUrl: string, keys: Partial<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {
    ANTHROPIC_BASE_URL: fakeUrl,
    OPENAI_BASE_URL: fakeUrl + "/v1",
    GEMINI_BASE_URL: fakeUrl,
    XAI_BASE_URL: fakeUrl + "/v1",
    DEEPSEEK_BASE_URL: fakeUrl,
    ANTHROPIC_API_KEY: "sk-ant-upstream-secret",
    OPENAI_API_KEY: "sk-openai-upstream-secret",
    GEMINI_API_KEY: "gemini-upstream-secret",
    XAI_API_KEY: "xai-upstream-secret",
    DEEPSEEK_API_KEY: "sk-deepseek-upstream-secret",
    // The built-in catalog sells no DeepSeek model now: a test entry keeps the DeepSeek translation covered.
    CATALOG_PATH: new URL("../support/deepseek-catalog.json", import.meta.url).pathname,
  };
  for (const [k, v] of Object.entries(keys)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export async function startEnv(
  opts: { keys?: Partial<Record<string, string>>; env?: Record<string, string> } = {},
): Promise<Env> {
  const fake = startFakeLlmUpstream();
  const gw = await startGateway({ ...providerEnv(fake.url, opts.keys), ...opts.env });
  return { fake, gw };
}

export async function stopEnv(e: Env) {
  await e.gw.stop();
  await e.fake.stop();
}

/**
 * startEnv for a whole test file: started before its tests, stopped after them, the fake's queue emptied before each.
 * The Env returned reads the one started, so `e.gw` and `e.fake` work in the tests as they would on startEnv's.
 */
export function useEnv(opts?: Parameters<typeof startEnv>[0] | (() => Parameters<typeof startEnv>[0])): Env {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv(typeof opts === "function" ? opts() : opts);
  });
  afterAll(() => stopEnv(env));
  beforeEach(() => env.fake.reset());
  return {
    get fake() {
      return env.fake;
    },
    get gw() {
      return env.gw;
    },
  };
}

/** A call's line in the ledger: its usage record (what it reserved, what it was charged, the entry that took it). */
export interface CallLine {
  id: string;
  request_id: string;
  status: string;
  /** what the record says went wrong, if anything */
  error: string | null;
  held: number;
  cost: number;
  entry_id: string | null;
}

/**
 * Waits until the account has no pending hold (settles run after the answer; the LLM float goes back to the wallet
 * LEDGER_FLOAT_IDLE_MS, 20 ms in tests, after the last call), then reads the ledger: the calls' lines (their usage
 * records), the entries that charged them (kind usage: one per wallet and commit) and the wallet.
 */
export async function ledgerOf(gw: TestGateway, accountId: string, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = await gw.ctx.db.all(
      sql`select id from holds where account_id = ${accountId} and status = 'pending'`,
    );
    if (pending.length === 0 || Date.now() > deadline) break;
    await Bun.sleep(5);
  }
  const calls = (
    await gw.ctx.db.all<CallLine>(
      sql`select id, request_id, status, error, held, cost, entry_id from usage_records where account_id = ${accountId} order by created_at, id`,
    )
  ).map((c) => ({ ...c, held: Number(c.held), cost: Number(c.cost) }));
  const charges = (
    await gw.ctx.db.all<{ id: string; amount: number }>(
      sql`select id, amount from entries where account_id = ${accountId} and kind = 'usage' order by created_at, id`,
    )
  ).map((e) => ({ ...e, amount: Number(e.amount) }));
  const wallet = (await gw.ctx.db.get<{ balance: number; held: number }>(
    sql`select balance, held from wallets where account_id = ${accountId}`,
  ))!;
  return { calls, charges, wallet };
}

/**
 * Asserts from the ledger that the account's only request was charged exactly `expected` µcr: its line says so,
 * one usage entry of minus that amount names it, and the balance is down by exactly that much.
 */
export async function expectCharged(gw: TestGateway, accountId: string, initialCredits: number, expected: number) {
  const { calls, charges, wallet } = await ledgerOf(gw, accountId);
  const { expect } = await import("bun:test");
  expect(calls.length).toBe(1);
  expect(calls[0]!.cost).toBe(expected);
  expect(charges.map((c) => c.amount)).toEqual(expected > 0 ? [-expected] : []);
  expect(calls[0]!.entry_id).toBe(expected > 0 ? charges[0]!.id : null);
  expect(Number(wallet.balance)).toBe(initialCredits * MICROS - expected);
  expect(Number(wallet.held)).toBe(0);
  return calls[0]!;
}

/** Asserts the account's calls were all voided: nothing charged, balance unchanged, nothing held. */
export async function expectVoided(gw: TestGateway, accountId: string, initialCredits: number, callsExpected = 1) {
  const { calls, charges, wallet } = await ledgerOf(gw, accountId);
  const { expect } = await import("bun:test");
  expect(calls.length).toBe(callsExpected);
  for (const c of calls) expect([c.cost, c.entry_id]).toEqual([0, null]);
  expect(charges).toEqual([]);
  expect(Number(wallet.balance)).toBe(initialCredits * MICROS);
  expect(Number(wallet.held)).toBe(0);
}

/** Sends a request, leaves (aborts) after `ms`, and returns how long the upstream took to see the client go. */
export async function leaveAfter(
  fake: FakeLlmUpstream,
  ms: number,
  send: (signal: AbortSignal) => Promise<unknown>,
): Promise<number> {
  const ac = new AbortController();
  const sent = send(ac.signal).catch(() => null);
  await Bun.sleep(ms);
  const leftAt = performance.now();
  ac.abort();
  await sent;
  const up = fake.requests.at(-1)!;
  while (up.abortedAt === undefined && performance.now() - leftAt < 1000) await Bun.sleep(2);
  return up.abortedAt === undefined ? Infinity : up.abortedAt - leftAt;
}

/** A fetch for SDK clients that counts the requests reaching the gateway. */
export function countingFetch() {
  const calls: string[] = [];
  const f = ((input: any, init?: any) => {
    calls.push(typeof input === "string" ? input : input.url);
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: f, calls };
}

/**
 * A fetch for clients (SDKs too) that cuts the fake's held drop (`cutWhenTold`) once `seen` is true of the answer
 * the client has read so far (its text and length in bytes): the gateway forwarded, so had read, every byte sent
 * before the cut. A timed cut is not enough on a busy machine: Bun's fetch loses the bytes that reach it together
 * with the reset.
 */
export function cutOnceSeen(fake: FakeLlmUpstream, seen: (text: string, bytes: number) => boolean): typeof fetch {
  return (async (input: any, init?: any) => {
    const r = await fetch(input, init);
    if (!r.body) return r;
    const decoder = new TextDecoder();
    let text = "";
    let bytes = 0;
    let cut = false;
    const watched = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        c.enqueue(chunk);
        text += decoder.decode(chunk, { stream: true });
        bytes += chunk.byteLength;
        if (!cut && seen(text, bytes)) {
          cut = true;
          fake.cut();
        }
      },
    });
    return new Response(r.body.pipeThrough(watched), {
      status: r.status,
      statusText: r.statusText,
      headers: r.headers,
    });
  }) as typeof fetch;
}

/** How many whole SSE events `text` holds (each ends with a blank line). */
export const eventCount = (text: string) => text.split("\n\n").length - 1;
