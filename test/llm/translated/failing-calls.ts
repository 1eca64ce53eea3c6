// For the tests of translated calls that fail: the clients of each protocol against a gateway, the rejection a call
// ends in, and the check that the account's one call was voided and recorded with a status.
import { afterAll, beforeAll, beforeEach, expect } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { readFileSync } from "node:fs";
import { expectVoided, ledgerOf, startEnv, stopEnv, type Env } from "../support";
import { LLMS } from "./clients";

export const model = (id: string) => LLMS.find((m) => m.id === id)!;
export const fixture = (name: string) => readFileSync(new URL(`../../fakes/fixtures/${name}`, import.meta.url), "utf8");
export const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (x) => x,
  );
export const hi = [{ role: "user" as const, content: "Hi" }];

/**
 * A gateway and fake upstream on `databaseUrl()` for a group of failing calls (started in its beforeAll, the fake's
 * scenario reset before each test, so a test that fails before its upstream call does not leave it to the next),
 * the SDK clients against it, and the release check on it.
 */
export function useFailingEnv(databaseUrl: () => string) {
  let started: Env | undefined;
  beforeAll(async () => {
    started = await startEnv({ env: { DATABASE_URL: databaseUrl() } });
  });
  afterAll(() => stopEnv(started!));
  beforeEach(() => started!.fake.reset());
  const env = () => started!;
  const e = {
    get gw() {
      return env().gw;
    },
    get fake() {
      return env().fake;
    },
  };
  return { e, ...failingCallHelpers(env) };
}

/** The SDK clients against the gateway of `env()` (started in a beforeAll), and the release check on it. */
function failingCallHelpers(env: () => Env) {
  const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: env().gw.url + "/v1", maxRetries: 0 });

  /** The account's one call: voided and recorded with `status`. */
  async function expectVoidedAs(accountId: string, status: string) {
    await expectVoided(env().gw, accountId, 100);
    expect((await ledgerOf(env().gw, accountId)).calls[0]!.status).toBe(status);
  }
  return { anthropic, openai, expectVoidedAs };
}
