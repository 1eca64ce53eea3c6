import type { Subprocess } from "bun";

// A redis-server of the test's own, on a free port, that the test can stop and start again on that same port (the
// shared one at TEST_REDIS_URL must never be stopped). Without a redis-server binary the tests that need it skip.

export const redisServerBinary = Bun.which("redis-server");

export function skipNoteRedisServer(what: string) {
  if (!redisServerBinary)
    console.warn(`SKIPPED: ${what} — no redis-server binary on PATH (the test starts and stops its own).`);
}

/** A port nothing listens on right now. */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

export class OwnRedis {
  private proc: Subprocess | undefined;
  readonly port = freePort();
  readonly url = `redis://127.0.0.1:${this.port}`;

  async start(): Promise<void> {
    this.proc = Bun.spawn(
      [
        redisServerBinary!,
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
      ],
      {
        stdout: "ignore",
        stderr: "ignore",
      },
    );
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      if (await this.answers()) return;
      await Bun.sleep(20);
    }
    throw new Error(`redis-server did not start on port ${this.port}`);
  }

  async stop(): Promise<void> {
    this.proc?.kill("SIGKILL"); // as if the host went away: no goodbye to the clients
    await this.proc?.exited;
    this.proc = undefined;
  }

  /** One command on a fresh connection of the test's own (not the gateway's). */
  async send(command: string, args: string[] = []): Promise<any> {
    const c = new Bun.RedisClient(this.url, {
      autoReconnect: false,
      enableOfflineQueue: false,
      connectionTimeout: 500,
    });
    try {
      await c.connect();
      return await c.send(command, args);
    } finally {
      c.close();
    }
  }

  private async answers(): Promise<boolean> {
    try {
      return (await this.send("PING")) === "PONG";
    } catch {
      return false;
    }
  }
}
