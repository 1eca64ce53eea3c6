// Whether the media engine has anything to do: a task not yet ended, a callback attempt not yet made, or (only when
// `results` is set: the engine's housekeeping looks at them no more often) a result file past its retention. A
// media worker waits on this before it loads the engine, so a gateway that serves no media task does not keep the
// engine's modules, catalog and connections in a second JS heap. It asks on a bare connection of its own
// (probeConnection), not through db/client.ts, whose drizzle and migrations alone were most of an idle worker's
// heap. Each probe reads at most one row through an index; the statements take no parameters, so one text serves
// both dialects.
import { Database } from "bun:sqlite";
import { SQL } from "bun";

/** Whether a statement returns a row. */
export type RowExists = (text: string) => Promise<boolean>;

export async function mediaWorkPending(exists: RowExists, opts: { results: boolean; now?: number }): Promise<boolean> {
  if (await exists("select 1 as x from tasks where state in ('waiting', 'generating') limit 1")) return true;
  if (await exists("select 1 as x from callback_deliveries where state = 'pending' limit 1")) return true;
  if (!opts.results) return false;
  const now = Math.floor(opts.now ?? Date.now());
  return exists(`select 1 as x from result_files where deleted_at is null and expires_at <= ${now} limit 1`);
}

/** A connection that only asks mediaWorkPending's questions: bun:sqlite, or one Postgres connection. */
export function probeConnection(databaseUrl: string): { exists: RowExists; close(): Promise<void> } {
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    const pg = new SQL(databaseUrl, { max: 1 });
    return {
      exists: async (text) => (await pg.unsafe(text)).length > 0,
      close: () => pg.close(),
    };
  }
  const db = new Database(databaseUrl, { create: false });
  // A writer holding the lock is waited for on this thread, which does nothing else meanwhile.
  db.exec("PRAGMA busy_timeout = 1000;");
  return {
    exists: async (text) => db.query(text).get() !== null,
    close: async () => db.close(),
  };
}
