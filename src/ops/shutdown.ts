import type { Logger } from "../log";

// Graceful shutdown. Background work (the hold sweeper, media workers, callback senders) registers a stop function
// with `onShutdown`; server.ts calls `gracefulStop` on SIGTERM/SIGINT. Order: the listener stops taking new
// connections while in-flight requests (including long LLM streams) keep running, and at the same time the
// registered hooks stop background work. Whatever is still open when the grace period ends is cut off, so a
// deploy never hangs on one slow client.

export type ShutdownHook = () => void | Promise<void>;
type Entry = { name: string; fn: ShutdownHook };
const hooks: Entry[] = [];
const graceOver: Entry[] = [];

/** Adds `entry` to `list`; returns its removal. */
function register(list: Entry[], entry: Entry): () => void {
  list.push(entry);
  return () => {
    const i = list.indexOf(entry);
    if (i >= 0) list.splice(i, 1);
  };
}

/** Registers background work to stop on shutdown (e.g. `onShutdown(() => pool.stop(), "media workers")`). */
export function onShutdown(fn: ShutdownHook, name: string = fn.name || "shutdown hook"): () => void {
  return register(hooks, { name, fn });
}

/**
 * Registers what to do when the grace period ends with requests still open, just before the server closes them
 * (the LLM streams end with their protocol's error event, llm/pump.ts cutStreams). Each has up to a second.
 */
export function onGraceOver(fn: ShutdownHook, name: string = fn.name || "grace-over hook"): () => void {
  return register(graceOver, { name, fn });
}

/** Closes what the server still has open, after the grace-over hooks (each up to a second). */
export async function closeNow(server: Stoppable, log: Logger): Promise<void> {
  for (const { name, fn } of graceOver) {
    const done = Promise.resolve()
      .then(fn)
      .catch((e) => log.error("grace-over hook failed", { hook: name, error: String(e) }));
    if (!(await within(done, 1000))) log.warn("grace-over hook did not finish in time", { hook: name });
  }
  await server.stop(true);
}

export interface Stoppable {
  /** Bun's server.stop: `false` stops accepting and waits for open requests; `true` closes them now. */
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}

/** Resolves true when `p` settles within `ms`, false when the deadline came first. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: Timer | undefined;
  const deadline = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** After the grace period: at most this long to commit what is queued and close the database (server.ts). */
export const CLOSE_DEADLINE_MS = 10_000;
/** The LLM ledger's part of it: what it still cannot write is logged before the process exits. */
export const LEDGER_CLOSE_MS = CLOSE_DEADLINE_MS - 2_000;

/**
 * Stops the server and the registered hooks within `graceMs`. Returns what had to be cut off, for the log.
 */
export async function gracefulStop(
  server: Stoppable,
  graceMs: number,
  log: Logger,
): Promise<{ drained: boolean; hooksDone: boolean }> {
  const draining = Promise.resolve(server.stop(false));
  const stopping = Promise.all(
    hooks.map(async ({ name, fn }) => {
      try {
        await fn();
      } catch (e) {
        log.error("shutdown hook failed", { hook: name, error: String(e) });
      }
    }),
  );
  const [drained, hooksDone] = await Promise.all([within(draining, graceMs), within(stopping, graceMs)]);
  if (!drained) {
    log.warn("grace period over: closing open connections", { grace_ms: graceMs });
    await closeNow(server, log);
  }
  if (!hooksDone) log.warn("grace period over: some shutdown hooks did not finish", { grace_ms: graceMs });
  return { drained, hooksDone };
}
