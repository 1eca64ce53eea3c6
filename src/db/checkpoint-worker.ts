// Entry of the WAL checkpoint worker (checkpointer.ts; an extra entrypoint of `bun run build`): one connection to the
// SQLite file that does nothing but PASSIVE checkpoints, and a last one when told to stop. It loops while the WAL
// keeps growing because SQLite starts the WAL over only when a writer finds every frame copied back: under sustained
// load a slow timer never catches up and the -wal file grows without end, while checkpointing again at once keeps
// each checkpoint short, so one soon finishes between two commits (docs/architecture.md, "Where the time goes").

import { Database } from "bun:sqlite";

declare const self: Worker;

export type ToCheckpointer = { type: "start"; path: string; everyMs: number } | { type: "stop" };
export type FromCheckpointer = { type: "ready" } | { type: "stopped" } | { type: "error"; message: string };

const post = (m: FromCheckpointer) => self.postMessage(m);
let db: Database | null = null;
let timer: Timer | null = null;
let everyMs = 200;
let lastLog = 0;

/** Runs one PASSIVE checkpoint; true when the WAL grew since the previous one (it was not started over). */
function checkpoint(): boolean {
  try {
    const r = db!.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number };
    const grew = r.log > lastLog;
    lastLog = r.log;
    return grew;
  } catch (e) {
    post({ type: "error", message: `WAL checkpoint failed: ${(e as Error).message}` });
    return false;
  }
}

function loop() {
  timer = setTimeout(loop, checkpoint() ? 0 : everyMs);
}

self.onmessage = (e: MessageEvent<ToCheckpointer>) => {
  const m = e.data;
  if (m.type === "start") {
    db = new Database(m.path);
    db.exec("PRAGMA busy_timeout = 5000;");
    everyMs = m.everyMs;
    timer = setTimeout(loop, everyMs);
    return post({ type: "ready" });
  }
  if (timer) clearTimeout(timer);
  if (db) {
    checkpoint();
    db.close();
  }
  post({ type: "stopped" });
};
