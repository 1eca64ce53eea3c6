import type { Logger } from "../log";
import { RedisConnection, type RedisCommands } from "./redis-connection";

// The thin adapter that lets @upstash/ratelimit run on a stock Redis through Bun's built-in client.
// @upstash/ratelimit only needs evalsha/eval. Its Lua scripts start with `#!lua flags=allow-key-locking`, a flag
// only Upstash accepts (Redis 7 answers "Unexpected flag in script shebang"), so the shebang line is stripped and
// the script runs under the SHA of the stripped text; the library's own SHA is mapped to it.

export class UpstashRedisAdapter {
  private shaMap = new Map<string, string>(); // library's SHA (with shebang) -> SHA of the stripped script

  constructor(readonly client: RedisCommands) {}

  async evalsha(sha: string, keys: string[], args: unknown[]): Promise<unknown> {
    const stripped = this.shaMap.get(sha);
    if (!stripped) throw new Error("NOSCRIPT adapter has not seen this script yet");
    return this.client.send("EVALSHA", [stripped, String(keys.length), ...keys, ...args.map(String)]);
  }

  async eval(script: string, keys: string[], args: unknown[]): Promise<unknown> {
    const body = script.startsWith("#!") ? script.slice(script.indexOf("\n") + 1) : script;
    this.shaMap.set(sha1(script), sha1(body));
    return this.client.send("EVAL", [body, String(keys.length), ...keys, ...args.map(String)]);
  }
}

function sha1(text: string): string {
  return new Bun.CryptoHasher("sha1").update(text).digest("hex");
}

/**
 * The gateway's Redis link (see redis-connection.ts). Waits for one first attempt so a healthy Redis is in use from
 * the first request, but never fails: a gateway started while Redis is down serves (limits in process, /readyz
 * 200 "degraded") and picks Redis up when it comes.
 */
export async function connectRedis(url: string, log?: Logger): Promise<RedisConnection> {
  const connection = new RedisConnection(url, { log });
  await connection.connect();
  return connection;
}
