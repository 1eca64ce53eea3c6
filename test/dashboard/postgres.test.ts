import { expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { freshPostgres, pgAvailable, skipNote } from "../support/services";
import { startGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";

// These tests hash passwords or start processes (seconds on a busy machine); in a full run bun 1.4.5 has been
// seen timing one out at its own 5 s default despite the preload's setDefaultTimeout, so the file sets it again.
setDefaultTimeout(30_000);

// The dashboard's and the scrape's SQL (grouping by day, sums, conditional filters) on PostgreSQL too.
skipNote("Postgres", pgAvailable, "dashboard pages and /metrics on Postgres");

test.skipIf(!pgAvailable)("dashboard pages, /metrics and /readyz on Postgres", async () => {
  const db = await freshPostgres();
  const gw = await startGateway({ DATABASE_URL: db.url });
  try {
    const u = await dashboardUser(gw, 10);
    const s = await signIn(gw, u.email);
    await gw.ctx.db.run(sql`insert into usage_records (id, request_id, account_id, key_id, model, endpoint, provider, status, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, cost, created_at)
      values (${"use_pg1"}, ${"req_pg1"}, ${u.accountId}, ${u.keyId}, ${"gpt-5.2"}, ${"/v1/chat/completions"}, ${"openai"}, ${"ok"}, ${10}, ${5}, ${0}, ${0}, ${1_500_000}, ${Date.now()})`);
    await gw.ctx.ledger.hold(u.accountId, 1_000_000, "llm", null, 60_000);
    for (const path of [
      "/dashboard",
      "/dashboard/usage",
      "/dashboard/usage?model=gpt-5.2&request_id=req_pg1",
      "/dashboard/tasks?state=success",
      "/dashboard/settings/webhooks",
      "/dashboard/settings/api-keys",
    ]) {
      const r = await fetch(gw.url + path, { headers: { cookie: s.cookie } });
      const page = await r.text();
      expect(r.status).toBe(200);
      if (path.startsWith("/dashboard/usage")) expect(page).toContain("req_pg1");
    }
    const metrics = await (await fetch(gw.url + "/metrics")).text();
    expect(metrics).toContain('switchyard_holds_open{kind="llm"} 1');
    expect(metrics).toContain('switchyard_holds_open_micro_credits{kind="llm"} 1000000');
    expect((await fetch(gw.url + "/readyz")).status).toBe(200);
  } finally {
    await gw.stop();
    await db.drop();
  }
});
