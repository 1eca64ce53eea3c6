// A key's own rate limit is whole or absent, whoever creates it: half of one (requests without a window) would
// quietly run with the default's other half. The window is bounded for every caller, the CLI too. The admin API's
// refusals state the range that was broken (Elysia's t.Integer is a union, whose own summary says only "should be
// one of: 'integer', 'integer'"). And `cli ledger:check` of an account that does not exist says so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accounts } from "../../src/accounts/service";
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { startGateway, type TestGateway } from "../support/gateway";
import { runCli as cli } from "../support/process";
import { tempSqlitePath } from "../support/services";

describe("the CLI", () => {
  const url = tempSqlitePath();
  let accountId: string;
  beforeAll(async () => {
    const db = await openDatabase(url);
    accountId = (await new Accounts(db, new Ledger(db)).createAccount("cli", 0)).id;
    await db.close();
  });

  test("--requests without --window, or --window alone, is refused and creates no key", () => {
    for (const args of [
      ["--requests", "10"],
      ["--window", "10"],
    ]) {
      const r = cli(url, "key:create", accountId, "--name", "half", ...args);
      expect([args, r.code]).toEqual([args, 1]);
      expect(r.err).toContain("needs both the number of requests and the window in seconds");
    }
    expect(JSON.parse(cli(url, "account:show", accountId).out).keys).toEqual([]);
  }, 30_000);

  test("a window beyond a day is refused; a large request count is the operator's to give", () => {
    const r = cli(url, "key:create", accountId, "--requests", "10", "--window", "999999999");
    expect(r.code).toBe(1);
    expect(r.err).toContain("window must be from 1 to 86400 seconds");
    const ok = cli(url, "key:create", accountId, "--name", "bench", "--requests", "1000000000", "--window", "1");
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ rate_limit: { requests: 1_000_000_000, window_seconds: 1 } });
  }, 30_000);

  test("ledger:check of an unknown account: not found, exit 1 (not a clean bill of health)", () => {
    const r = cli(url, "ledger:check", "acct_nope");
    expect(r.code).toBe(1);
    expect(r.err).toContain("No account acct_nope.");
    expect(cli(url, "ledger:check", accountId).code).toBe(0);
  }, 30_000);
});

describe("the admin API", () => {
  let gw: TestGateway;
  let accountId: string;
  beforeAll(async () => {
    gw = await startGateway();
    accountId = (await gw.account(0)).accountId;
  });
  afterAll(() => gw.stop());

  test.each([
    [
      { rate_limit: { requests: 0, window_seconds: 10 } },
      "rate_limit.requests: must be a whole number from 1 to 1000000",
    ],
    [
      { rate_limit: { requests: 2_000_000, window_seconds: 10 } },
      "rate_limit.requests: must be a whole number from 1 to 1000000",
    ],
    [
      { rate_limit: { requests: 5, window_seconds: 86_401 } },
      "rate_limit.window_seconds: must be a whole number from 1 to 86400",
    ],
    [{ max_concurrent_tasks: 0 }, "max_concurrent_tasks: must be a whole number from 1 to 10000"],
  ])("%j: 422 stating the range", async (body, message) => {
    const r = await gw.admin(`/admin/v1/accounts/${accountId}/keys`, {
      method: "POST",
      body: JSON.stringify({ name: "k", ...body }),
    });
    expect(r.status).toBe(422);
    expect(((await r.json()) as any).error.message).toBe(message);
  });
});
