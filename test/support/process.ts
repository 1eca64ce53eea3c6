import type { Subprocess } from "bun";
import { ADMIN_TOKEN } from "./gateway";
import { tempSqlitePath } from "./services";

// Starts the real gateway as a separate process (as an operator would) and waits for its "listening" log line.
export interface GatewayProcess {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** what the gateway has written to stdout so far (its JSON log lines) */
  stdout(): string;
  stop(): Promise<void>;
}

export async function spawnGateway(
  env: Record<string, string>,
  cmd: string[] = ["bun", "src/main.ts"],
  cwd?: string,
): Promise<GatewayProcess> {
  const proc = Bun.spawn(cmd, {
    cwd: cwd ?? new URL("../..", import.meta.url).pathname,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let buf = "";
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { value, done } = await Promise.race([
      reader.read(),
      Bun.sleep(20_000).then(() => ({ value: undefined, done: true })),
    ]);
    if (done) break;
    buf += new TextDecoder().decode(value);
    const line = buf.split("\n").find((l) => l.includes('"switchyard listening"'));
    if (line) {
      reader.releaseLock();
      // Keep draining stdout so the child never blocks on a full pipe; kept for tests that read the log.
      let out = buf;
      const decoder = new TextDecoder();
      void proc.stdout.pipeTo(
        new WritableStream({ write: (chunk) => void (out += decoder.decode(chunk, { stream: true })) }),
      );
      return {
        url: JSON.parse(line).url,
        proc,
        stdout: () => out,
        async stop() {
          proc.kill("SIGTERM");
          await proc.exited;
        },
      };
    }
  }
  proc.kill();
  throw new Error(`gateway did not start: ${buf}\n${await new Response(proc.stderr).text()}`);
}

/** A free local port: for a gateway whose address is needed before it says it is listening. */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/**
 * The gateway as a process on `port` whose media workers fail to start after FAILING_WORKER_MS
 * (support/failing-media-worker.ts), on a fresh SQLite file; its stdout and stderr are the caller's to read.
 */
export function spawnFailingMedia(port: number, env: Record<string, string>): Subprocess<"ignore", "pipe", "pipe"> {
  return Bun.spawn(
    ["bun", "--preload", new URL("./failing-media-worker.ts", import.meta.url).pathname, "src/main.ts"],
    {
      cwd: new URL("../..", import.meta.url).pathname,
      env: {
        ...process.env,
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: "info",
        DATABASE_URL: tempSqlitePath(),
        ...env,
      },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
}

/** Until the gateway on `port` answers /healthz (it serves before its media workers have started). */
export async function untilServing(port: number, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (
    Date.now() < until &&
    !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await Bun.sleep(20);
}

/** A new account with `credits` on a gateway process (started with ADMIN_TOKEN), made through the admin API. */
export async function accountOn(
  url: string,
  name: string,
  credits: number,
): Promise<{ accountId: string; key: string }> {
  const admin = (path: string, body: unknown) =>
    fetch(url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json() as any);
  const account = await admin("/admin/v1/accounts", { name, credits });
  const { key } = await admin(`/admin/v1/accounts/${account.id}/keys`, { name: "k" });
  return { accountId: account.id, key };
}

/** Runs `bun src/cli.ts …args` on the database at `databaseUrl`, as an operator would, and waits for it to exit. */
export function runCli(databaseUrl: string, ...args: string[]): { code: number; out: string; err: string } {
  const r = Bun.spawnSync(["bun", "src/cli.ts", ...args], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}
