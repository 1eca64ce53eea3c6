// Whether the media engine has anything to do: a task not yet ended, a callback attempt not yet made, or (only when
// `results` is set: the engine's housekeeping looks at them no more often) a result file past its retention. A
// media worker waits on this before it loads the engine, so a gateway that serves no media tasks does not keep the
// engine's modules, catalog and connections in a second JS heap. Each probe reads one row through an index.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

export async function mediaWorkPending(db: Db, opts: { results: boolean; now?: number }): Promise<boolean> {
  const task = await db.get(sql`select 1 as x from tasks where state in (${"waiting"}, ${"generating"}) limit 1`);
  if (task) return true;
  const callback = await db.get(sql`select 1 as x from callback_deliveries where state = ${"pending"} limit 1`);
  if (callback) return true;
  if (!opts.results) return false;
  const now = opts.now ?? Date.now();
  const expired = await db.get(
    sql`select 1 as x from result_files where deleted_at is null and expires_at <= ${now} limit 1`,
  );
  return expired !== undefined;
}
