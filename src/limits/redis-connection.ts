import { RedisClient } from "bun";
import { silentLogger, type Logger } from "../log";

// The gateway's one link to Redis: Redis slow or gone never stalls or breaks a request, and the link comes back on
// its own however long Redis was away (Bun's autoReconnect gives up after `maxRetries`, and its offline queue makes
// commands wait meanwhile). Commands are never queued: with no live connection they fail at once
// (RedisUnavailableError), on a live one after COMMAND_TIMEOUT_MS, and callers fall back or refuse cleanly. A closed
// client, or one whose command timed out (a half-open socket would cost every request the timeout until the OS
// notices), is dropped; the next use reconnects in the background with doubling waits, never giving up. Every user
// holds this object, never a RedisClient, so all of them always use the live client.

/** The one thing the limits need from Redis; a RedisClient has it too (tests pass one directly). */
export interface RedisCommands {
  send(command: string, args: string[]): Promise<any>;
}

export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
}

/** A Redis round trip on a LAN takes well under a millisecond; one that takes this long is treated as an outage. */
export const COMMAND_TIMEOUT_MS = 250;
export const CONNECT_TIMEOUT_MS = 1_000;
export const RETRY_MIN_MS = 100;
/** The longest wait between connection attempts: the most Redis can be back before the gateway notices. */
export const RETRY_MAX_MS = 2_000;

export interface RedisConnectionOptions {
  log?: Logger;
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
}

export class RedisConnection implements RedisCommands {
  private client: RedisClient | undefined;
  private attempt: Promise<void> | undefined;
  private failures = 0;
  private retryAt = 0;
  private down = false;
  private closed = false;
  private readonly log: Logger;
  private readonly commandTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;

  constructor(
    private readonly url: string,
    opts: RedisConnectionOptions = {},
  ) {
    this.log = opts.log ?? silentLogger;
    this.commandTimeoutMs = opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.retryMinMs = opts.retryMinMs ?? RETRY_MIN_MS;
    this.retryMaxMs = opts.retryMaxMs ?? RETRY_MAX_MS;
  }

  /** Whether a connected client is in hand right now. */
  get up(): boolean {
    return !!this.client?.connected;
  }

  /** One command on the live client. Rejects at once when there is none, and after the command timeout otherwise. */
  send(command: string, args: string[]): Promise<any> {
    const client = this.live();
    if (!client)
      return Promise.reject(
        new RedisUnavailableError(this.closed ? "Redis connection closed" : "Redis is not connected"),
      );
    return this.timed(client, client.send(command, args));
  }

  /** Connect now if not connected (skipping the backoff wait) and wait for that attempt: startup and /readyz. */
  async connect(): Promise<boolean> {
    if (!this.up && !this.closed) {
      if (this.client) this.drop(this.client, "connection lost");
      this.startAttempt();
    }
    await this.attempt;
    return this.up;
  }

  /** PING, connecting first when needed: the readiness check. */
  async ping(): Promise<void> {
    await this.connect();
    await this.send("PING", []);
  }

  /** For good: no more attempts, commands fail at once. */
  close(): void {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    client?.close();
  }

  private live(): RedisClient | undefined {
    if (this.client?.connected) return this.client;
    if (this.client) this.drop(this.client, "connection lost");
    if (!this.closed && !this.attempt && Date.now() >= this.retryAt) this.startAttempt();
    return undefined;
  }

  private startAttempt() {
    this.attempt ??= this.reconnect().finally(() => (this.attempt = undefined));
  }

  private async reconnect(): Promise<void> {
    // autoReconnect off: this class decides when to retry (see the top); offline queue off: fail, never wait.
    const client = new RedisClient(this.url, {
      autoReconnect: false,
      enableOfflineQueue: false,
      connectionTimeout: this.connectTimeoutMs,
    });
    client.onclose = (e) => this.drop(client, e?.message ?? "closed");
    try {
      // Bun's connectionTimeout bounds this already; the race makes sure an attempt can never hang forever.
      await raceTimeout(client.connect(), this.connectTimeoutMs + 500);
    } catch (e) {
      client.onclose = null;
      client.close();
      return this.failed(String((e as Error)?.message ?? e));
    }
    if (this.closed) return client.close();
    if (this.client) this.drop(this.client, "replaced"); // cannot happen while attempts are one at a time; cheap to be sure
    this.client = client;
    this.failures = 0;
    if (this.down) this.log.info("redis connected again", {});
    this.down = false;
  }

  private failed(error: string) {
    this.failures++;
    const wait = Math.min(this.retryMaxMs, this.retryMinMs * 2 ** (this.failures - 1));
    // Jitter, so that many gateway processes do not knock on a recovering Redis in step.
    this.retryAt = Date.now() + wait * (0.75 + Math.random() / 4);
    this.markDown(error);
  }

  private drop(client: RedisClient, error: string) {
    if (this.client !== client) return; // an old client (already replaced or dropped) closing late
    this.client = undefined;
    client.onclose = null;
    client.close();
    this.retryAt = 0; // first reconnect on the next use; the backoff applies only when attempts fail
    this.markDown(error);
  }

  private markDown(error: string) {
    if (this.down || this.closed) return;
    this.down = true;
    this.log.warn("redis unavailable; reconnecting in the background", { error });
  }

  private timed<T>(client: RedisClient, p: Promise<T>): Promise<T> {
    return raceTimeout(p, this.commandTimeoutMs).catch((e) => {
      if (e instanceof TimeoutError) {
        this.drop(client, `no answer within ${this.commandTimeoutMs} ms`);
        throw new RedisUnavailableError(`Redis did not answer within ${this.commandTimeoutMs} ms`);
      }
      throw e;
    });
  }
}

class TimeoutError extends Error {}

function raceTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new TimeoutError(`timed out after ${ms} ms`)), ms)),
  );
  p.catch(() => {}); // the loser of the race may still reject later; that is not an unhandled error
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
