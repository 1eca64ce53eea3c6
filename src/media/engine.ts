// The task engine: claims due tasks with a lease and moves each one step (task-steps.ts: submit or poll, ended
// through task-outcome.ts). It runs in a Bun Worker (worker.ts) or, for `:memory:` databases and MEDIA_WORKERS=0, on
// the main thread; all state is in the database, so any process can pick up any unfinished task. A task has one owner
// at a time (Postgres claims with SKIP LOCKED, so processes split the work rather than queue; SQLite with a
// compare-and-set), every later write is guarded by `lease_owner = me`, and the engine never claims a task it has a
// step in flight for: the owner string is the engine's, so `lease_owner = me` alone could not tell two steps apart.
import { sql } from "drizzle-orm";
import { TokenReleases, type TaskTokens } from "../limits/task-tokens";
import { createAdapters } from "./adapters/index";
import { deliverDue, type CallbackDeps } from "./callbacks";
import { keepLease } from "./lease";
import { sweepExpiredResults } from "./retention";
import { tokenTtlMs } from "./settings";
import { type StepDeps, TaskSteps } from "./task-steps";
import { maskSecrets } from "./upstream-errors";
import type { TaskRow } from "./views";

export interface EngineDeps extends StepDeps, CallbackDeps {
  tokens: TaskTokens;
}

// Work in flight per engine: task steps and callback sends run concurrently and are not awaited by the round, so
// one slow upstream or receiver (a 15 s callback timeout, a 2-minute OpenAI image) never stalls the others.
const MAX_INFLIGHT = 32;
const IDLE_MS = 200;

export class Engine {
  private steps: TaskSteps;
  private running = false;
  private loop?: Promise<void>;
  private lastHousekeeping = 0;
  private endIdleWait?: () => void;
  private inflight = new Set<Promise<unknown>>();
  /** Ids of the tasks with a step in flight: never claimed again by this engine until that step has ended. */
  private stepping = new Set<string>();
  /**
   * Gives tokens back; one refused (Redis away) is tried again at every round until it goes through. It never throws:
   * a throw would fail an ended task's step (rescheduling it for nothing) and leave the token taken until it expired.
   */
  private tokenReleases: TokenReleases;

  constructor(private deps: EngineDeps) {
    this.tokenReleases = new TokenReleases(deps.tokens, (taskId, e) =>
      deps.log.warn("concurrency token not given back yet; retrying", {
        task_id: taskId,
        error: String((e as Error)?.message ?? e),
      }),
    );
    this.steps = new TaskSteps(
      deps,
      createAdapters(deps.settings.upstreams, deps.settings.upstreamUrls),
      this.tokenReleases,
    );
  }

  /** One round: claim due tasks and callbacks and start them; housekeeping when it is time. Returns work started. */
  async tick(): Promise<number> {
    let room = MAX_INFLIGHT - this.inflight.size;
    const tasks = room > 0 ? await this.claim(room) : [];
    for (const t of tasks) this.track(this.run(t));
    room = MAX_INFLIGHT - this.inflight.size;
    const sends = room > 0 ? await deliverDue(this.deps, room) : [];
    for (const s of sends) this.track(s);
    if (Date.now() - this.lastHousekeeping >= this.deps.settings.housekeepingMs) await this.housekeeping();
    await this.tokenReleases.retry();
    return tasks.length + sends.length;
  }

  /** Wait for everything started so far (tests drive the engine with tick() + drain()). */
  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }

  private track(p: Promise<unknown>) {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        let started = 0;
        try {
          started = await this.tick();
        } catch (e) {
          this.deps.log.error("media engine round failed", { error: String(e) });
        }
        if (!started && this.running) await new Promise<void>((r) => ((this.endIdleWait = r), setTimeout(r, IDLE_MS)));
      }
    })();
  }

  /** Stop claiming; let the steps and sends in progress finish (their leases would otherwise hold tasks back). */
  async stop(): Promise<void> {
    this.running = false;
    this.endIdleWait?.();
    await this.loop;
    await this.drain();
  }

  /** Refresh the tokens of running tasks (a restarted process rebuilds them too) and delete expired results. */
  async housekeeping(): Promise<void> {
    this.lastHousekeeping = Date.now();
    const live = await this.deps.db.all<{ id: string; key_id: string }>(
      sql`select id, key_id from tasks where state in (${"waiting"}, ${"generating"})`,
    );
    const ttl = tokenTtlMs(this.deps.settings);
    for (const t of live) await this.deps.tokens.refresh(t.key_id, t.id, ttl);
    await this.releaseEndedSinceRead(live);
    await sweepExpiredResults(this.deps);
  }

  /**
   * A task may end between the read above and its refresh: its own release then comes first and the refresh
   * re-creates a token nobody gives back, refusing the key's next task until it expires. Reading the states again
   * after the refreshes closes that: a task that ended before this read is released here, one that ends after it
   * releases its token itself, after the refresh.
   */
  private async releaseEndedSinceRead(refreshed: Array<{ id: string; key_id: string }>): Promise<void> {
    for (let i = 0; i < refreshed.length; i += 500) {
      const ids = sql.join(
        refreshed.slice(i, i + 500).map((t) => sql`${t.id}`),
        sql`, `,
      );
      const ended = await this.deps.db.all<{ id: string; key_id: string }>(sql`select id, key_id from tasks
        where id in (${ids}) and state not in (${"waiting"}, ${"generating"})`);
      for (const t of ended) await this.tokenReleases.release(t.key_id, t.id);
    }
  }

  private async claim(limit: number): Promise<TaskRow[]> {
    const { db, owner, settings } = this.deps;
    const now = Date.now();
    const until = now + settings.leaseMs;
    // A step of ours whose lease lapsed anyway (an extension came late) is still running: leave its task alone.
    const notOurs = this.stepping.size
      ? sql`and id not in (${sql.join(
          [...this.stepping].map((id) => sql`${id}`),
          sql`, `,
        )})`
      : sql``;
    if (db.dialect === "pg") {
      return db.all<TaskRow>(sql`update tasks set lease_owner = ${owner}, lease_until = ${until}
        where id in (select id from tasks where state in (${"waiting"}, ${"generating"}) and next_poll_at <= ${now}
          and (lease_until is null or lease_until < ${now}) ${notOurs} order by next_poll_at limit ${limit} for update skip locked)
        returning *`);
    }
    const due = await db.all<{ id: string; lease_until: number | null }>(sql`select id, lease_until from tasks
      where state in (${"waiting"}, ${"generating"}) and next_poll_at <= ${now} and (lease_until is null or lease_until < ${now})
      ${notOurs} order by next_poll_at limit ${limit}`);
    const out: TaskRow[] = [];
    for (const d of due) {
      const row = await db.get<TaskRow>(sql`update tasks set lease_owner = ${owner}, lease_until = ${until}
        where id = ${d.id} and state in (${"waiting"}, ${"generating"}) and (lease_until is null or lease_until < ${now}) returning *`);
      if (row) out.push(row);
    }
    return out;
  }

  /** One step of a claimed task, its lease kept until the step has ended (errors included). */
  private async run(task: TaskRow): Promise<void> {
    this.stepping.add(task.id);
    const lease = keepLease(this.deps, task);
    try {
      await this.steps.step(task, lease);
    } catch (e) {
      // Another worker owns the task now: its failure is not ours to reschedule (the write would be refused anyway).
      if (lease.lost)
        this.deps.log.warn("task taken over during a step; step abandoned", {
          task_id: task.id,
          error: maskSecrets(String((e as Error)?.message ?? e)),
        });
      else await this.steps.stepFailed(task, e);
    } finally {
      await lease.stop();
      this.stepping.delete(task.id);
    }
  }
}
