// Result files are kept for RESULT_RETENTION_DAYS: past that they are deleted from storage, their rows marked
// deleted and the task flagged `results_expired`, so its record says the files are gone rather than linking to 404s.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { Logger } from "../log";
import type { Storage } from "./storage";

export async function sweepExpiredResults(
  deps: { db: Db; storage: Storage; log: Logger },
  now = Date.now(),
): Promise<number> {
  const { db, storage } = deps;
  const rows = await db.all<{
    id: string;
    task_id: string;
    storage_key: string;
  }>(sql`select id, task_id, storage_key from result_files
    where deleted_at is null and expires_at <= ${now} limit 500`);
  for (const f of rows) {
    await storage
      .delete(f.storage_key)
      .catch((e) => deps.log.warn("result file delete failed", { file: f.id, error: String(e) }));
    await db.tx(function* (q) {
      yield* q.run(sql`update result_files set deleted_at = ${now} where id = ${f.id}`);
      yield* q.run(sql`update tasks set results_expired = ${1}, updated_at = ${now} where id = ${f.task_id}`);
    });
  }
  if (rows.length) deps.log.info("expired result files deleted", { count: rows.length });
  return rows.length;
}
