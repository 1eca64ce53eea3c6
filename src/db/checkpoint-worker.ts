// Entry of the WAL checkpoint worker (checkpointer.ts; an extra entrypoint of `bun run build`). One connection to
// the SQLite file that does nothing but PASSIVE checkpoints on a timer, and a last one when told to stop.

import { Database } from "bun:sqlite";

declare const self: Worker;

export type ToCheckpointer = { type: "start"; path: string; everyMs: number } | { type: "stop" };
export type FromCheckpointer = { type: "ready" } | { type: "stopped" } | { type: "error"; message: string };

const post = (m: FromCheckpointer) => self.postMessage(m);
let db: Database | null = null;
let timer: Timer | null = null;

function checkpoint() {
  try {
    db!.query("PRAGMA wal_checkpoint(PASSIVE)").get();
  } catch (e) {
    post({ type: "error", message: `WAL checkpoint failed: ${(e as Error).message}` });
  }
}

self.onmessage = (e: MessageEvent<ToCheckpointer>) => {
  const m = e.data;
  if (m.type === "start") {
    db = new Database(m.path);
    db.exec("PRAGMA busy_timeout = 5000;");
    timer = setInterval(checkpoint, m.everyMs);
    return post({ type: "ready" });
  }
  if (timer) clearInterval(timer);
  if (db) {
    checkpoint();
    db.close();
  }
  post({ type: "stopped" });
};
