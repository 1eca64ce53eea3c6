// SQLite WAL checkpoints off the event loop. By default the connection whose commit takes the WAL past 1000 pages
// copies it back inside that commit, pausing the gateway's event loop. Instead a small Bun Worker with its own
// connection runs a PASSIVE checkpoint every CHECKPOINT_EVERY_MS (never waiting for or blocking writers), back to
// back while the WAL grows (checkpoint-worker.ts says why). The gateway's connection checkpoints only as a backstop
// past BACKSTOP_PAGES, and goes back to SQLite's default should the worker die.

import type { Database } from "bun:sqlite";
import type { FromCheckpointer, ToCheckpointer } from "./checkpoint-worker";
import { workerUrl } from "../worker-url";

export const CHECKPOINT_EVERY_MS = 200;
/** SQLite's default: what the connection goes back to without the worker. */
const AUTOCHECKPOINT_PAGES = 1000;
/**
 * With the worker, the connection still checkpoints itself past this many WAL pages (~400 MB): a backstop for a
 * writer that leaves the worker no gap at all, far above what a loaded gateway's WAL reaches.
 */
export const BACKSTOP_PAGES = 100_000;

const WORKER_URL = workerUrl("db/checkpoint-worker.ts");

export interface Checkpointer {
  /** The worker itself (a test ends it to see the connection take checkpoints back). */
  worker: Worker;
  stop(): Promise<void>;
}

export async function startCheckpointer(
  raw: Database,
  path: string,
  onError: (message: string) => void,
  backstopPages = BACKSTOP_PAGES,
): Promise<Checkpointer> {
  const worker = new Worker(WORKER_URL);
  worker.unref();
  let stopping = false;
  let stopped: () => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    worker.addEventListener("message", (e: MessageEvent<FromCheckpointer>) => {
      if (e.data.type === "ready") resolve();
      else if (e.data.type === "stopped") stopped();
      else onError(e.data.message);
    });
    worker.addEventListener("error", (e) => reject(new Error((e as ErrorEvent).message)));
  });
  worker.addEventListener("close", () => {
    if (stopping) return stopped();
    raw.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    onError("the checkpoint worker exited; the gateway's connection checkpoints the WAL itself again");
  });
  worker.postMessage({ type: "start", path, everyMs: CHECKPOINT_EVERY_MS } satisfies ToCheckpointer);
  await ready;
  raw.exec(`PRAGMA wal_autocheckpoint = ${backstopPages}`);
  return {
    worker,
    async stop() {
      stopping = true;
      const done = new Promise<void>((r) => (stopped = r));
      worker.postMessage({ type: "stop" } satisfies ToCheckpointer);
      // A plain Bun.sleep would stay scheduled after the worker answered, keeping a CLI process alive 2 s more.
      let timer: Timer | undefined;
      await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, 2000)))]);
      clearTimeout(timer);
      worker.terminate();
      raw.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    },
  };
}
