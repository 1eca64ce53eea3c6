import type { Subprocess } from "bun";

// Starts the real gateway as a separate process (as an operator would) and waits for its "listening" log line.
export interface GatewayProcess { url: string; proc: Subprocess; stop(): Promise<void> }

export async function spawnGateway(env: Record<string, string>, cmd: string[] = ["bun", "src/main.ts"], cwd?: string): Promise<GatewayProcess> {
  const proc = Bun.spawn(cmd, {
    cwd: cwd ?? new URL("../..", import.meta.url).pathname,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let buf = "";
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { value, done } = await Promise.race([reader.read(), Bun.sleep(20_000).then(() => ({ value: undefined, done: true }))]);
    if (done) break;
    buf += new TextDecoder().decode(value);
    const line = buf.split("\n").find((l) => l.includes('"switchyard listening"'));
    if (line) {
      reader.releaseLock();
      // Keep draining stdout so the child never blocks on a full pipe.
      void proc.stdout.pipeTo(new WritableStream());
      return {
        url: JSON.parse(line).url,
        proc,
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
