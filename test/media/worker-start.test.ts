// startMedia starts all of its Bun Workers or none: one that cannot start (an "error" event, as one whose database
// is refused) stops those that did before startMedia fails. Left running, they went on taking tasks with nothing
// left to stop them, until the process exited in the middle of a step (helper-31).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startMedia } from "../../src/media/workers";
import { startGateway, type TestGateway } from "../support/gateway";
import { tempSqlitePath } from "../support/services";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ DATABASE_URL: tempSqlitePath(), MEDIA_WORKERS: "2" });
});
afterAll(() => gw.stop());

test("one media worker that cannot start: the others are stopped, then startMedia fails", async () => {
  const RealWorker = globalThis.Worker;
  const stopped: string[] = [];
  let media = 0;
  (globalThis as any).Worker = function (url: string | URL, opts?: WorkerOptions) {
    if (!String(url).includes("media/worker")) return new RealWorker(url, opts);
    if (media++ === 0) {
      const failing = new EventTarget() as any;
      failing.postMessage = () => {};
      failing.terminate = () => {};
      setTimeout(
        () => failing.dispatchEvent(Object.assign(new Event("error"), { message: "cannot open the database" })),
        300,
      );
      return failing;
    }
    const w = new RealWorker(url, opts);
    const terminate = w.terminate.bind(w);
    w.terminate = () => {
      stopped.push("the worker that started");
      terminate();
    };
    return w;
  };
  try {
    expect(
      await startMedia(gw.ctx).then(
        () => "started",
        (e) => String(e),
      ),
    ).toContain("media worker failed to start: cannot open the database");
    expect(stopped).toEqual(["the worker that started"]);
  } finally {
    globalThis.Worker = RealWorker;
  }
}, 20_000);

test("one fails while another never finishes starting: startMedia fails at once (not after the slowest), and both are ended", async () => {
  const RealWorker = globalThis.Worker;
  const terminated: number[] = [];
  let media = 0;
  (globalThis as any).Worker = function (url: string | URL, opts?: WorkerOptions) {
    if (!String(url).includes("media/worker")) return new RealWorker(url, opts);
    const i = media++;
    const w = new EventTarget() as any;
    w.postMessage = () => {};
    w.terminate = () => void terminated.push(i);
    if (i === 0)
      setTimeout(
        () => w.dispatchEvent(Object.assign(new Event("error"), { message: "cannot open the database" })),
        100,
      );
    return w; // the other one: neither "started" nor "error"
  };
  try {
    const outcome = await Promise.race([
      startMedia(gw.ctx).then(
        () => "started",
        (e) => String(e),
      ),
      Bun.sleep(3000).then(() => "still pending after 3 s"),
    ]);
    expect(outcome).toContain("media worker failed to start: cannot open the database");
    expect(terminated.sort()).toEqual([0, 1]);
  } finally {
    globalThis.Worker = RealWorker;
  }
}, 10_000);
