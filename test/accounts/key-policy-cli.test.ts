// A key's policy changed with the CLI's key:update (the same checks and messages as the admin API's PATCH, nothing
// written on bad input), and a change made on one process reaching another within the auth cache's window.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, ADMIN_TOKEN, type TestGateway } from "../support/gateway";
import { runCli as cli, spawnGateway, type GatewayProcess } from "../support/process";
import { tempSqlitePath } from "../support/services";

setDefaultTimeout(30_000);

const patch = (body: unknown) => ({ method: "PATCH", body: JSON.stringify(body) });
const future = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 19) + "Z";

describe("key:update (CLI)", () => {
  const url = tempSqlitePath();
  let gw: TestGateway;
  let accountId: string;
  let keyId: string;
  beforeAll(async () => {
    gw = await startGateway({ DATABASE_URL: url });
    ({ accountId, keyId } = await gw.account(10));
  });
  afterAll(() => gw.stop());

  test("changes what is given; the operator's request count is unbounded", () => {
    const r = cli(
      url,
      "key:update",
      accountId,
      keyId,
      "--name",
      "ops",
      "--requests",
      "5000000",
      "--window",
      "1",
      "--models",
      "claude-*,gpt-5.2",
      "--expires",
      future,
      "--budget-day",
      "2.5",
      "--budget-lifetime",
      "100",
    );
    expect(r.err).toBe("");
    expect(JSON.parse(r.out)).toMatchObject({
      name: "ops",
      rate_limit: { requests: 5_000_000, window_seconds: 1 },
      models: ["claude-*", "gpt-5.2"],
      budget: { day: 2.5, lifetime: 100 },
    });
    const back = JSON.parse(
      cli(
        url,
        "key:update",
        accountId,
        keyId,
        "--requests",
        "default",
        "--models",
        "all",
        "--expires",
        "never",
        "--budget-day",
        "none",
      ).out,
    );
    expect(back).toMatchObject({ rate_limit: null, models: null, expires_at: null, budget: { lifetime: 100 } });
  }, 30_000);

  test("bad input: exit 1 with the admin API's own message, nothing written", async () => {
    const cases: Array<[string[], Record<string, unknown>]> = [
      [["--budget-day=-1"], { budget: { day: "-1" } }],
      [["--budget-week", "lots"], { budget: { week: "lots" } }],
      [["--models", ""], { models: [""] }],
      [["--expires", "2020-01-01T00:00:00Z"], { expires_at: "2020-01-01T00:00:00Z" }],
    ];
    const before = await gw.ctx.db.get<any>(sql`select * from api_keys where id = ${keyId}`);
    for (const [args, body] of cases) {
      const r = cli(url, "key:update", accountId, keyId, ...args);
      const api = await gw.admin(`/admin/v1/accounts/${accountId}/keys/${keyId}`, patch(body));
      expect([args, r.code, api.status]).toEqual([args, 1, 422]);
      expect(JSON.parse(r.err).error).toBe(((await api.json()) as any).error.message);
    }
    expect(await gw.ctx.db.get<any>(sql`select * from api_keys where id = ${keyId}`)).toEqual(before);
  }, 60_000);
});

describe("a change reaches another process", () => {
  const url = tempSqlitePath();
  let a: TestGateway;
  let b: GatewayProcess;
  beforeAll(async () => {
    a = await startGateway({ DATABASE_URL: url });
    b = await spawnGateway({ DATABASE_URL: url, ADMIN_TOKEN, DEFAULT_RATE_LIMIT: "1000/10s" });
  }, 30_000);
  afterAll(async () => {
    await b.stop();
    await a.stop();
  });

  test("a PATCH on one process changes the key's rate limit on the other within the auth cache's 5 s", async () => {
    const { accountId, key, keyId } = await a.account(10);
    const limitOn = async (url: string) =>
      (await fetch(url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } })).headers.get(
        "x-ratelimit-limit",
      );
    expect(await limitOn(b.url)).toBe("1000"); // cached on b now
    expect(
      (
        await a.admin(
          `/admin/v1/accounts/${accountId}/keys/${keyId}`,
          patch({ rate_limit: { requests: 900, window_seconds: 10 } }),
        )
      ).status,
    ).toBe(200);
    expect(await limitOn(a.url)).toBe("900"); // the process that changed it: at once
    const deadline = Date.now() + 5_000 + 2_000;
    let seen = await limitOn(b.url);
    while (seen !== "900" && Date.now() < deadline) {
      await Bun.sleep(250);
      seen = await limitOn(b.url);
    }
    expect(seen).toBe("900");
  }, 30_000);
});
