// Saturating throughput with wrk (C, one thread: it leaves the CPU to the gateway under test). A Lua script per
// run makes wrk POST our body with our headers; its --latency summary is parsed for p50/p99 and requests/s.

import { mkdirSync, writeFileSync } from "node:fs";

export interface Request {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WrkResult {
  rps: number;
  p50: number; // ms
  p99: number; // ms
  requests: number;
  non2xx: number;
  errors: number;
}

export function haveWrk(): boolean {
  return Bun.spawnSync(["sh", "-c", "command -v wrk"]).exitCode === 0;
}

function luaScript(r: Request): string {
  const q = (s: string) => `[==[${s}]==]`;
  const lines = ['wrk.method = "POST"', `wrk.body = ${q(r.body)}`];
  for (const [k, v] of Object.entries(r.headers)) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${q(v)}`);
  return lines.join("\n") + "\n";
}

export async function runWrk(
  r: Request,
  opts: { connections: number; seconds: number; scratch: string; name: string },
): Promise<WrkResult> {
  mkdirSync(opts.scratch, { recursive: true });
  const script = `${opts.scratch}/${opts.name}.lua`;
  writeFileSync(script, luaScript(r));
  const p = Bun.spawn(["wrk", "-t1", `-c${opts.connections}`, `-d${opts.seconds}s`, "--latency", "-s", script, r.url], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return parseWrk(out);
}

function toMs(v: string, unit: string): number {
  const n = Number(v);
  return unit === "us" ? n / 1000 : unit === "s" ? n * 1000 : unit === "m" ? n * 60_000 : n;
}

export function parseWrk(out: string): WrkResult {
  const pct = (p: string) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(out);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50: pct("50"),
    p99: pct("99"),
    requests: num(/(\d+) requests in/),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    errors: errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}
