import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../src/log";
import { gracefulStop, onShutdown, within } from "../../src/ops/shutdown";
import { freePort, spawnFailingMedia, spawnGateway, untilServing } from "../support/process";
import { startGateway } from "../support/gateway";
import { closeContext } from "../../src/bootstrap";
import { tempSqlitePath } from "../support/services";

// Graceful shutdown: a stream in flight finishes within the grace period, new connections are refused at once,
// registered hooks run, and a stream longer than the grace period is cut off at its end.

function slowStreamServer(chunks: number, everyMs: number) {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      let i = 0;
      return new Response(
        new ReadableStream({
          async pull(c) {
            await Bun.sleep(everyMs);
            c.enqueue(new TextEncoder().encode(`chunk ${i}\n`));
            if (++i === chunks) c.close();
          },
        }),
        { headers: { "content-type": "text/plain" } },
      );
    },
  });
}

describe("gracefulStop", () => {
  test("lets an in-flight stream finish, refuses new connections, runs the hooks", async () => {
    const server = slowStreamServer(6, 100);
    const url = `http://127.0.0.1:${server.port}/`;
    const res = await fetch(url);
    const body = res.text();
    let hookRan = false;
    const unregister = onShutdown(async () => {
      await Bun.sleep(50);
      hookRan = true;
    }, "test worker");
    try {
      const stopping = gracefulStop(server, 5_000, silentLogger);
      await Bun.sleep(20);
      await expect(fetch(url)).rejects.toThrow(); // no longer listening
      const result = await stopping;
      expect(result).toEqual({ drained: true, hooksDone: true });
      expect(await body).toBe([0, 1, 2, 3, 4, 5].map((i) => `chunk ${i}\n`).join(""));
      expect(hookRan).toBe(true);
    } finally {
      unregister();
    }
  });

  test("cuts off what is still open when the grace period ends", async () => {
    const server = slowStreamServer(100, 100); // ~10 s
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    const body = res.text().catch((e) => `cut: ${e}`);
    const t0 = performance.now();
    const result = await gracefulStop(server, 300, silentLogger);
    const elapsed = performance.now() - t0;
    expect(result.drained).toBe(false);
    expect(elapsed).toBeLessThan(2_000);
    const text = await body;
    expect(text).not.toContain("chunk 99");
  });
});

describe("the gateway process", () => {
  test("SIGTERM right after the listening line is handled: a graceful stop, exit 0 (not killed by the signal)", async () => {
    const gw = await spawnGateway({ DATABASE_URL: tempSqlitePath(), SHUTDOWN_GRACE_SECONDS: "5" });
    gw.proc.kill("SIGTERM"); // the media workers may still be starting
    expect(await gw.proc.exited).toBe(0);
  });

  test("SIGTERM: stops listening and exits 0 within the grace period", async () => {
    const gw = await spawnGateway({ DATABASE_URL: ":memory:", SHUTDOWN_GRACE_SECONDS: "5" });
    expect((await fetch(gw.url + "/healthz")).status).toBe(200);
    const t0 = performance.now();
    gw.proc.kill("SIGTERM");
    expect(await gw.proc.exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(5_000);
    await expect(fetch(gw.url + "/healthz")).rejects.toThrow();
  });
});

describe("closing the services", () => {
  test("a close step that never ends is given up at the deadline (false), so the process can still exit", async () => {
    const gw = await startGateway();
    await gw.app.stop(true);
    gw.ctx.beforeClose.unshift(() => new Promise<void>(() => {})); // e.g. a database that stopped answering
    const t0 = performance.now();
    expect(await within(closeContext(gw.ctx), 300)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(1_500);
    gw.ctx.beforeClose.splice(0);
    await gw.ctx.db.close();
  });

  test("a close step that fails: the failure is reported, the database closed all the same, and a second call waits for the first", async () => {
    const gw = await startGateway();
    await gw.app.stop(true);
    gw.ctx.beforeClose.unshift(() => Promise.reject(new Error("the ledger could not close")));
    const first = closeContext(gw.ctx);
    expect(closeContext(gw.ctx)).toBe(first);
    await expect(first).rejects.toThrow("the ledger could not close");
    await expect(gw.ctx.db.ping()).rejects.toThrow();
  });

  test("one that ends in time reports true, and the database is closed", async () => {
    const gw = await startGateway();
    await gw.app.stop(true);
    expect(await within(closeContext(gw.ctx), 5_000)).toBe(true);
    await expect(gw.ctx.db.ping()).rejects.toThrow();
  });
});

describe("media workers that fail to start (test/support/failing-media-worker.ts)", () => {
  test("the gateway says it cannot start and exits 1; it never says it is listening", async () => {
    const proc = spawnFailingMedia(freePort(), { FAILING_WORKER_MS: "300" });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(code).toBe(1);
    expect(out).not.toContain('"switchyard listening"');
    expect(err).toContain("switchyard could not start: media workers");
  }, 30_000);

  test("a SIGTERM while they start, which then fails: the graceful stop completes, exit 0", async () => {
    const port = freePort();
    const proc = spawnFailingMedia(port, { FAILING_WORKER_MS: "1500", SHUTDOWN_GRACE_SECONDS: "5" });
    const stdout = new Response(proc.stdout).text();
    await untilServing(port);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(await stdout).toContain('"stopped"');
  }, 30_000);
});
