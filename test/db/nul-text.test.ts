// U+0000 cannot be stored in a Postgres text column, and a parameter holding one failed there with a 500 (SQLite took
// it). A request holding one, in its URL or in a form or JSON body, gets a 400 in its surface's shape on either
// database; text from elsewhere that the gateway stores (an upstream's error message) has it replaced.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { storableText } from "../../src/db/client";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser } from "../support/dashboard";
import { databaseFor, pgAvailable, skipNote } from "../support/services";
import { errorOf } from "../support/json";

test("storableText replaces U+0000 and leaves other text as it is", () => {
  expect(storableText("a\u0000b")).toBe("a\uFFFDb");
  expect(storableText("plain \\u0000 text")).toBe("plain \\u0000 text");
});

for (const dialect of ["sqlite", "pg"] as const) {
  const available = dialect === "sqlite" || pgAvailable;
  if (dialect === "pg") skipNote("Postgres", pgAvailable, "NUL characters on Postgres");
  describe.skipIf(!available)(`NUL characters on ${dialect}`, () => {
    let gw: TestGateway;
    let drop = async () => {};
    let key: string;
    let accountId: string;
    beforeAll(async () => {
      const env: Record<string, string> = {};
      if (dialect === "pg") {
        const target = await databaseFor("pg");
        env.DATABASE_URL = target.url;
        drop = target.drop;
      }
      gw = await startGateway(env);
      ({ key, accountId } = await gw.account(100));
    });
    afterAll(async () => {
      await gw.stop();
      await drop();
    });
    const get = (path: string) => fetch(gw.url + path, { headers: { authorization: `Bearer ${key}` } });

    test("in a path or query parameter: 400 invalid_request in the caller's shape, never a 500", async () => {
      for (const path of ["/v1/usage?request_id=%00", "/v1/usage?model=gpt%00", "/v1/tasks/%00"]) {
        const r = await get(path);
        expect([path, r.status]).toEqual([path, 400]);
        expect((await errorOf(r)).error).toMatchObject({
          code: "invalid_request",
          message: expect.stringContaining("NUL"),
        });
      }
      const jobs = await get("/api/v1/jobs/recordInfo?taskId=%00");
      expect(jobs.status).toBe(400);
      expect(await jobs.json()).toMatchObject({ code: 400, error_code: "invalid_request" });
      expect((await gw.admin("/admin/v1/accounts/%00")).status).toBe(400);
    });

    test("in a JSON or form body: 400; the text \\u0000 (a backslash and five characters) is accepted", async () => {
      const named = (name: string) =>
        gw.admin("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ name }) });
      expect((await named("a\u0000b")).status).toBe(400);
      expect((await named("a\\u0000b")).status).toBe(201);
      const estimate = await fetch(gw.url + "/v1/credits/estimate", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "google/nano-banana", input: { prompt: "x\u0000" } }),
      });
      expect(estimate.status).toBe(400);
      const { email } = await dashboardUser(gw);
      const login = await fetch(gw.url + "/dashboard/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `email=${encodeURIComponent(email)}%00&password=whatever-it-is`,
        redirect: "manual",
      });
      expect(login.status).toBe(400);
    });

    test("an error message holding U+0000 in a call's usage record is stored, with the character replaced", async () => {
      const ledger = gw.ctx.llmLedger;
      const hold = await ledger.hold(accountId, C, "req_nul_error");
      ledger.postOrVoid({
        hold,
        charge: null,
        record: {
          requestId: "req_nul_error",
          accountId,
          keyId: "key_t",
          model: "gpt-5.2",
          endpoint: "/v1/chat/completions",
          provider: "openai",
          status: "upstream_error",
          upstreamStatus: 500,
          usage: null,
          cost: 0,
          latencyMs: 1,
          ttfbMs: 1,
          error: "upstream said \u0000 oops",
        },
      });
      await ledger.drain();
      const row = await gw.ctx.db.get<{ error: string }>(
        sql`select error from usage_records where id = ${"req_nul_error"}`,
      );
      expect(row?.error).toBe("upstream said \uFFFD oops");
    });
  });
}
