// Migrations that move data, on both dialects: a database at an earlier migration, with rows written as that
// version wrote them, brought up to date. 0005 keys usage records by their request id (llm/records.ts): a record
// written before it (id `use_…`) is found by its request id through the primary key afterwards.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { migrations } from "../../drizzle/bundle";
import { openDatabase } from "../../src/db/client";
import { applyMigrations } from "../../src/db/migrate";
import { dialects, databaseFor, skipNote } from "../support/services";

for (const d of dialects) {
  skipNote("Postgres", d.available, `migrations on ${d.name}`);
  describe.skipIf(!d.available)(`migrations on ${d.name}`, () => {
    test("0005: an older usage record gets its request id as its key; a lookup by request id finds it", async () => {
      const { url, drop } = await databaseFor(d.name);
      const all = migrations[d.name];
      const before = all.findIndex((m) => m.tag.startsWith("0005_"));
      expect(before).toBeGreaterThan(0);
      // The database as the version before 0005 left it.
      (migrations as any)[d.name] = all.slice(0, before);
      let db = await openDatabase(url);
      (migrations as any)[d.name] = all;
      try {
        const insert = (id: string, requestId: string, cost: number) =>
          db.run(sql`insert into usage_records (id, request_id, account_id, key_id, model, endpoint, provider, status, input_tokens, output_tokens,
              cache_read_tokens, cache_write_tokens, cost, created_at)
            values (${id}, ${requestId}, ${"acct_1"}, ${"key_1"}, ${"gpt-5.2"}, ${"/v1/chat/completions"}, ${"openai"}, ${"ok"}, ${1}, ${2}, ${0}, ${0}, ${cost}, ${1})`);
        await insert("use_0190aaaa", "req_0190bbbb", 42);
        // Two records of one request (an older version's retry after a lost commit acknowledgement): the first by id
        // takes the key, the other keeps its own, and the migration does not fail.
        await insert("use_0190cccc", "req_0190dddd", 7);
        await insert("use_0190eeee", "req_0190dddd", 7);
        await db.close();
        db = await openDatabase(url);
        await applyMigrations(db); // again: nothing left to do
        expect(await db.all(sql`select id, request_id, cost from usage_records order by request_id, id`)).toEqual([
          { id: "req_0190bbbb", request_id: "req_0190bbbb", cost: 42 },
          { id: "req_0190dddd", request_id: "req_0190dddd", cost: 7 },
          { id: "use_0190eeee", request_id: "req_0190dddd", cost: 7 },
        ]);
        const indexes =
          d.name === "sqlite"
            ? await db.all<{ name: string }>(
                sql`select name from sqlite_master where type = 'index' and tbl_name = 'usage_records'`,
              )
            : await db.all<{ name: string }>(
                sql`select indexname as name from pg_indexes where tablename = 'usage_records'`,
              );
        expect(indexes.map((i) => i.name)).not.toContain("usage_request");
      } finally {
        await db.close();
        await drop();
      }
    });
  });
}
