// The LLM routes' key guard answers a cached key under the in-process limit at once, with no promise (protect.ts
// keyWithinLimit): a first sight of the key is a database lookup (a promise), every later call is not. Refusals
// are the same either way.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ApiError } from "../../src/http/errors";
import { keyWithinLimit } from "../../src/http/protect";
import { startGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.stop());

const keyed = (key: string) =>
  new Request("http://gw/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${key}` } });

test("a key first seen is looked up; once cached it is answered without a promise, with its limit's headers", async () => {
  const { key, accountId } = await gw.account(100, { rateRequests: 50, rateWindowSeconds: 60 });
  const first: Record<string, unknown> = {};
  const looked = keyWithinLimit(gw.ctx, keyed(key), first);
  expect(looked).toBeInstanceOf(Promise);
  expect((await looked).accountId).toBe(accountId);
  expect(first["x-ratelimit-limit"]).toBe("50");

  const headers: Record<string, unknown> = {};
  const cached = keyWithinLimit(gw.ctx, keyed(key), headers);
  expect(cached).not.toBeInstanceOf(Promise);
  expect((cached as { accountId: string }).accountId).toBe(accountId);
  expect(headers).toMatchObject({ "x-ratelimit-limit": "50", "x-ratelimit-remaining": "48" });
});

test("over its limit, a cached key is refused at once with 429 and retry-after", async () => {
  const { key } = await gw.account(100, { rateRequests: 1, rateWindowSeconds: 60 });
  await keyWithinLimit(gw.ctx, keyed(key), {}); // looked up, and the one request of the window
  let refused: unknown;
  try {
    keyWithinLimit(gw.ctx, keyed(key), {});
  } catch (e) {
    refused = e;
  }
  expect(refused).toBeInstanceOf(ApiError);
  expect(refused).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
  expect((refused as ApiError).headers?.["retry-after"]).toMatch(/^\d+$/);
});

test("an unknown key is still a 401 (a rejected lookup), a missing one a 401 at once", async () => {
  await expect(Promise.resolve(keyWithinLimit(gw.ctx, keyed("sy_unknown"), {}))).rejects.toMatchObject({
    status: 401,
  });
  expect(() => keyWithinLimit(gw.ctx, new Request("http://gw/v1/chat/completions"), {})).toThrow("Missing API key");
});
