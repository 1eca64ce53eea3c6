// The processes a benchmark run talks to: the fake upstream (--fast), Switchyard (SQLite, in-process limits, one
// account with a key whose rate limit never bites), and Portkey's open-source gateway, installed on demand into
// .bench/ (gitignored) and run with Bun.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";

export const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
export const SCRATCH = join(ROOT, ".bench");
export const PORTKEY_VERSION = "1.15.2";

export interface Proc {
  url: string;
  proc: Subprocess;
  stop(): Promise<void>;
}

async function waitHttp(url: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      await fetch(url, { method: "HEAD" });
      return;
    } catch {
      await Bun.sleep(100);
    }
  }
  throw new Error(`${url} did not come up`);
}

/** What `bun start` and the image give the gateway, given to every target and probe alike: Bun's fetch otherwise lets
 *  only 256 requests out at once, and the open-streams section holds 1,000. */
const RUNTIME_ENV = { BUN_CONFIG_MAX_HTTP_REQUESTS: process.env.BUN_CONFIG_MAX_HTTP_REQUESTS || "16384" };

function spawn(cmd: string[], env: Record<string, string> = {}, cwd = ROOT): Subprocess {
  return Bun.spawn(cmd, { cwd, env: { ...process.env, ...RUNTIME_ENV, ...env }, stdout: "ignore", stderr: "inherit" });
}

async function started(proc: Subprocess, url: string): Promise<Proc> {
  await waitHttp(url);
  return {
    url,
    proc,
    async stop() {
      proc.kill("SIGTERM");
      await Promise.race([proc.exited, Bun.sleep(3000)]);
      if (proc.exitCode === null) proc.kill("SIGKILL");
    },
  };
}

export async function startFake(port: number): Promise<Proc> {
  return started(
    spawn(["bun", "test/fakes/llm-upstream.ts", "--port", String(port), "--fast"]),
    `http://127.0.0.1:${port}`,
  );
}

/** The slow upstream of the open-streams and soak sections (bench/dribble-upstream.ts). */
export async function startDribble(port: number): Promise<Proc> {
  return started(spawn(["bun", "bench/dribble-upstream.ts", String(port)]), `http://127.0.0.1:${port}`);
}

/** The floor: a Bun proxy with no logic at all (bench/bare-proxy.ts). */
export async function startBareProxy(port: number, upstream: string): Promise<Proc> {
  return started(spawn(["bun", "bench/bare-proxy.ts", String(port), upstream]), `http://127.0.0.1:${port}`);
}

/** Switchyard on a fresh SQLite file with one funded account; returns the process and the key. */
export async function startSwitchyard(
  port: number,
  upstream: string,
): Promise<Proc & { key: string; stopAndCheck(): Promise<LedgerState> }> {
  mkdirSync(SCRATCH, { recursive: true });
  const db = join(SCRATCH, `switchyard-${Date.now()}.sqlite`);
  const env = {
    DATABASE_URL: db,
    OPENAI_BASE_URL: upstream + "/v1",
    OPENAI_API_KEY: "sk-bench",
    LOG_LEVEL: "warn",
    HOST: "127.0.0.1",
    PORT: String(port),
  };
  const cli = async (args: string[]) => {
    const p = Bun.spawn(["bun", "src/cli.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdout: "pipe",
      stderr: "inherit",
    });
    const out = await new Response(p.stdout).text();
    if ((await p.exited) !== 0) throw new Error(`cli ${args[0]} failed`);
    return JSON.parse(out);
  };
  const account = await cli(["account:create", "--name", "bench", "--credits", "100000000"]);
  const key = await cli(["key:create", account.id, "--name", "bench", "--requests", "1000000000", "--window", "1"]);
  const p = await started(spawn(["bun", "src/main.ts"], env), `http://127.0.0.1:${port}`);
  const remove = () => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(db + suffix, { force: true });
  };
  const stop = async () => {
    await p.stop();
    remove();
  };
  // Graceful stop first: the floats go back to their wallets on the way out, so what is pending after is a leak.
  const stopAndCheck = async () => {
    await p.stop();
    try {
      return await ledgerState(db, env);
    } finally {
      remove();
    }
  };
  return { ...p, stop, stopAndCheck, key: key.key };
}

/** What the books say after the gateway stopped: pending holds left, `ledger:check`, usage records by status. */
export interface LedgerState {
  pendingHolds: number;
  balanced: boolean;
  usageByStatus: Record<string, number>;
}

async function ledgerState(db: string, env: Record<string, string>): Promise<LedgerState> {
  const sqlite = new Database(db, { readonly: true });
  try {
    const pending = sqlite
      .query<{ n: number }, []>("select count(*) as n from holds where status = 'pending'")
      .get()!.n;
    const byStatus = sqlite
      .query<{ status: string; n: number }, []>("select status, count(*) as n from usage_records group by status")
      .all();
    const check = Bun.spawnSync(["bun", "src/cli.ts", "ledger:check"], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    let balanced = false;
    try {
      balanced = check.exitCode === 0 && JSON.parse(check.stdout.toString()).ok === true;
    } catch {}
    return { pendingHolds: pending, balanced, usageByStatus: Object.fromEntries(byStatus.map((r) => [r.status, r.n])) };
  } finally {
    sqlite.close();
  }
}

/** npm-installs Portkey's gateway into .bench/ once. Returns the entry script, or null with a reason. */
export function ensurePortkey(): { entry: string } | { skipped: string } {
  const dir = join(SCRATCH, "portkey");
  const entry = join(dir, "node_modules/@portkey-ai/gateway/build/start-server.js");
  if (existsSync(entry)) return { entry };
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, "package.json"))) writeFileSync(join(dir, "package.json"), '{"private":true}\n');
  const r = Bun.spawnSync(["npm", "install", "--no-audit", "--no-fund", `@portkey-ai/gateway@${PORTKEY_VERSION}`], {
    cwd: dir,
    stdout: "ignore",
    stderr: "pipe",
  });
  if (r.exitCode !== 0 || !existsSync(entry))
    return { skipped: `npm install @portkey-ai/gateway@${PORTKEY_VERSION} failed: ${r.stderr.toString().slice(-300)}` };
  return { entry };
}

export async function startPortkey(entry: string, port: number): Promise<Proc> {
  return started(
    spawn(["bun", entry, `--port=${port}`, "--headless"], { NODE_ENV: "production" }),
    `http://127.0.0.1:${port}`,
  );
}

/** Resident memory now and at peak, and the anonymous part of now (heap, not mapped files), in MB from /proc. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number; anonMb: number } {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(s)?.[1] ?? NaN);
    return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024, anonMb: kb("RssAnon") / 1024 };
  } catch {
    return { rssMb: NaN, peakMb: NaN, anonMb: NaN };
  }
}

/** CPU time a process has used so far, all its threads, in µs (utime + stime of /proc/<pid>/stat); NaN if unreadable. */
export function cpuMicros(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // the name may contain spaces
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

const CLOCK_TICKS = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

export function machine(): { cpus: number; model: string; bun: string } {
  let model = "unknown";
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? model;
  } catch {}
  const nproc = Number(Bun.spawnSync(["nproc"]).stdout.toString().trim()) || navigator.hardwareConcurrency;
  return { cpus: nproc, model, bun: Bun.version };
}

/**
 * Runs a probe script as its own process (so its work and event loop are not the runner's) and parses the one JSON
 * line it prints. The spec goes in a file: an agent body is larger than one command-line argument may be.
 */
export async function runProbe<T>(script: string, spec: object, env: Record<string, string> = {}): Promise<T> {
  mkdirSync(SCRATCH, { recursive: true });
  const file = join(SCRATCH, `${script.replace(/\W/g, "-")}-spec.json`);
  writeFileSync(file, JSON.stringify(spec));
  const p = Bun.spawn(["bun", join(ROOT, "bench", script), file], {
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, ...RUNTIME_ENV, ...env },
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  try {
    return JSON.parse(out) as T;
  } catch {
    throw new Error(`${script} failed: ${out.slice(0, 500)}`);
  }
}
