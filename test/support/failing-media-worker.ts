// Test preload: the media workers (src/media/worker.ts) fail to start after FAILING_WORKER_MS, as one whose
// database connection is refused looks to startMedia: an "error" event and no "started" message. Other Workers
// (the SQLite checkpointer) are real.
const ms = Number(process.env.FAILING_WORKER_MS ?? "300");
const RealWorker = globalThis.Worker;
class FailingMediaWorker extends EventTarget {
  postMessage() {}
  terminate() {}
  ref() {}
  unref() {}
}
(globalThis as any).Worker = function (url: string | URL, opts?: any) {
  if (!String(url).includes("media/worker")) return new RealWorker(url, opts);
  const w = new FailingMediaWorker();
  setTimeout(() => w.dispatchEvent(Object.assign(new Event("error"), { message: "cannot open the database" })), ms);
  return w;
};
