// DATABASE_POOL_SIZE: the Postgres connections a gateway process holds, whatever its load (scaling out is counting
// connections against the server's max_connections; before, every process took 20 and nothing could lower it).
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { sql } from "drizzle-orm";
import { closeContext, createContext } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { silentLogger } from "../../src/log";
import { databaseFor, PG_ADMIN_URL, pgAvailable, skipNote } from "../support/services";

skipNote("Postgres", pgAvailable, "DATABASE_POOL_SIZE");
describe.skipIf(!pgAvailable)("DATABASE_POOL_SIZE on Postgres", () => {
  test("a process with DATABASE_POOL_SIZE=3 never holds more than 3 connections, under 30 concurrent queries", async () => {
    const target = await databaseFor("pg");
    const admin = new SQL(PG_ADMIN_URL, { max: 1 });
    const ctx = await createContext(loadConfig({ DATABASE_URL: target.url, DATABASE_POOL_SIZE: "3" }), silentLogger, {
      redis: false,
    });
    try {
      const name = new URL(target.url).pathname.slice(1);
      const connections = async () =>
        Number((await admin`select count(*)::int as n from pg_stat_activity where datname = ${name}`)[0].n);
      let most = 0;
      const load = Promise.all(Array.from({ length: 30 }, () => ctx.db.all(sql`select pg_sleep(0.02)`)));
      while (Bun.peek.status(load) === "pending") {
        most = Math.max(most, await connections());
        await Bun.sleep(5);
      }
      await load;
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(3);
    } finally {
      await closeContext(ctx);
      await admin.close();
      await target.drop();
    }
  }, 30_000);

  test("refused outside 1 to 1000, naming the setting", () => {
    for (const v of ["0", "1001", "ten"])
      expect(() => loadConfig({ DATABASE_POOL_SIZE: v })).toThrow("DATABASE_POOL_SIZE");
  });
});
