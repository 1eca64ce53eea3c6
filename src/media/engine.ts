// The task engine: claims due tasks with a lease, moves each one step (submit, or poll), and ends it through
// task-outcome.ts. It runs in a Bun Worker (worker.ts) or, for `:memory:` databases and MEDIA_WORKERS=0, on the main
// thread; all state is in the database, so any process can pick up any unfinished task. A task has one owner at a
// time (Postgres claims with SKIP LOCKED, so processes split the work rather than queue; SQLite with a
// compare-and-set), every later write is guarded by `lease_owner = me`, and the engine never claims a task it has a
// step in flight for: the owner string is the engine's, so `lease_owner = me` alone could not tell two steps apart.
import { sql } from "drizzle-orm";
import type { Catalog } from "../catalog/service";
import { storableText } from "../db/client";
import { PendingReleases, type TaskTokens } from "../limits/task-tokens";
import { createAdapters, type Adapter } from "./adapters/index";
import type { Done, Failed } from "./adapters/types";
import { deliverDue, type CallbackDeps } from "./callbacks";
import { completeTask, failTask, ResultRefused, type OutcomeDeps } from "./task-outcome";
import { keepLease, type Lease } from "./lease";
import type { MediaModel, MediaProvider } from "./model";
import { tokenTtlMs } from "./service";
import { sweepExpiredResults } from "./retention";
import { everyRouteRefusedMessage, maskSecrets, upstreamFailedMessage } from "./upstream-errors";
import type { TaskRow } from "./views";

export interface EngineDeps extends OutcomeDeps, CallbackDeps {
  catalog: Catalog;
  tokens: TaskTokens;
}

// Work in flight per engine: task steps and callback sends run concurrently and are not awaited by the round, so
// one slow upstream or receiver (a 15 s callback timeout, a 2-minute OpenAI image) never stalls the others.
const MAX_INFLIGHT = 32;
const IDLE_MS = 200;
/** upstream_ref of a task whose upstream answered with the result itself (see finishSynchronousResult). */
const ANSWERED_SYNCHRONOUSLY = "answered-synchronously";
/** upstream_ref of a waiting task while a submission is under way: `submitting:<route index>:<provider>` (see submit). */
const SUBMITTING = "submitting:";

export class Engine {
  private adapters: Record<MediaProvider, Adapter>;
  private running = false;
  private loop?: Promise<void>;
  private lastHousekeeping = 0;
  private wake?: () => void;
  private inflight = new Set<Promise<unknown>>();
  /** Ids of the tasks with a step in flight: never claimed again by this engine until that step has ended. */
  private stepping = new Set<string>();
  /**
   * Gives tokens back; one refused (Redis away) is tried again at every round until it goes through. It never throws:
   * a throw would fail an ended task's step (rescheduling it for nothing) and leave the token taken until it expired.
   */
  private unreleased: PendingReleases;

  constructor(private deps: EngineDeps) {
    this.adapters = createAdapters(deps.settings.upstreams, deps.settings.upstreamUrls);
    this.unreleased = new PendingReleases(deps.tokens, (taskId, e) =>
      deps.log.warn("concurrency token not given back yet; retrying", {
        task_id: taskId,
        error: String((e as Error)?.message ?? e),
      }),
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
    await this.unreleased.retry();
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
        if (!started && this.running) await new Promise<void>((r) => ((this.wake = r), setTimeout(r, IDLE_MS)));
      }
    })();
  }

  /** Stop claiming; let the steps and sends in progress finish (their leases would otherwise hold tasks back). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
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
      for (const t of ended) await this.unreleased.release(t.key_id, t.id);
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
      await this.step(task, lease);
    } catch (e) {
      // Another worker owns the task now: its failure is not ours to reschedule (the write would be refused anyway).
      if (lease.lost)
        this.deps.log.warn("task taken over during a step; step abandoned", {
          task_id: task.id,
          error: maskSecrets(String((e as Error)?.message ?? e)),
        });
      else await this.stepFailed(task, e);
    } finally {
      await lease.stop();
      this.stepping.delete(task.id);
    }
  }

  private async step(task: TaskRow, lease: Lease): Promise<void> {
    const model = this.deps.catalog.media.get(task.model);
    if (!model) return this.fail(task, "model_unavailable", `Model ${task.model} is no longer in the catalog`);
    // Not always the upstream's slowness: a result that could not be stored is retried until this deadline too.
    if (Date.now() >= task.deadline_at) return this.failAtDeadline(task);
    if (task.state === "waiting") return this.submit(task, model, lease);
    if (task.upstream_ref === ANSWERED_SYNCHRONOUSLY) {
      return this.fail(
        task,
        "result_not_stored",
        "The upstream produced the result but the gateway could not store it; nothing was charged.",
      );
    }
    const adapter = this.adapters[task.provider as MediaProvider];
    const r = await adapter.poll(task.upstream_ref!);
    if (r.kind === "pending") return this.reschedule(task, adapter);
    return this.end(task, model, r, lease);
  }

  /**
   * Try the routes in order from route_index; a refusal moves on to the next, all refused fails the task.
   *
   * None of the upstreams documents an idempotency key, so a submission whose owner died before recording the
   * answer cannot be asked about: the upstream may have accepted it, and submitting again may pay twice. Each
   * submission is therefore marked on the row first (upstream_ref `submitting:…` while waiting); an owner that finds
   * a mark logs the possible duplicate with what it knows and counts it (`possible_duplicate`), then submits.
   */
  private async submit(task: TaskRow, model: MediaModel, lease: Lease): Promise<void> {
    const input = JSON.parse(task.input) as Record<string, unknown>;
    const refusals: Array<{ provider: string; code: string }> = [];
    const interrupted = task.upstream_ref?.startsWith(SUBMITTING)
      ? (task.upstream_ref.split(":")[2] ?? "unknown")
      : null;
    if (interrupted) {
      this.deps.metrics.upstreamError(interrupted, "possible_duplicate");
      this.deps.log.warn("task found with an interrupted submission; submitting it again may pay twice", {
        task_id: task.id,
        previous_provider: interrupted,
      });
    }
    for (let i = task.route_index; i < model.routes.length; i++) {
      // The new owner submits the task itself: one more route tried here would be a second paid generation.
      if (lease.lost)
        return void this.deps.log.warn("task taken over while its routes were tried; not submitted again", {
          task_id: task.id,
        });
      const route = model.routes[i]!;
      const adapter = this.adapters[route.provider];
      const marked =
        await this.deps.db.run(sql`update tasks set upstream_ref = ${`${SUBMITTING}${i}:${route.provider}`}, updated_at = ${Date.now()}
        where id = ${task.id} and state = ${"waiting"} and lease_owner = ${this.deps.owner}`);
      if (marked !== 1)
        return void this.deps.log.warn("task taken over before its submission; not submitted", { task_id: task.id });
      const notifyUrl = `${this.deps.settings.publicBaseUrl}/v1/media/upstream-events/${route.provider}`;
      let r;
      try {
        r = await adapter.submit(route, input, { taskId: task.id, notifyUrl, deadlineAt: task.deadline_at });
      } catch (e) {
        // A synchronous call cut at the deadline (or any call that outlived it): no next route, the task is over.
        if (Date.now() >= task.deadline_at) return this.failAtDeadline(task);
        r = { kind: "refused" as const, code: "network", message: String((e as Error).message ?? e) };
      }
      if (r.kind === "refused") {
        refusals.push({ provider: route.provider, code: r.code });
        this.deps.metrics.upstreamError(route.provider, "refused");
        this.deps.log.warn("upstream refused a task", {
          task_id: task.id,
          provider: route.provider,
          code: r.code,
          message: maskSecrets(r.message),
        });
        continue;
      }
      const at = { ...task, route_index: i, provider: route.provider };
      if (r.kind === "done") return this.finishSynchronousResult(at, model, r, lease);
      if (r.kind === "failed") {
        await this.deps.db.run(
          sql`update tasks set route_index = ${i}, provider = ${route.provider} where id = ${task.id} and lease_owner = ${this.deps.owner}`,
        );
        return this.end(at, model, r, lease);
      }
      const now = Date.now();
      const recorded = await this.deps.db
        .run(sql`update tasks set state = ${"generating"}, route_index = ${i}, provider = ${route.provider},
          upstream_ref = ${storableText(r.ref)}, attempts = ${0}, next_poll_at = ${now + this.delayMs(adapter, 0)}, updated_at = ${now},
          lease_owner = ${null}, lease_until = ${null}
        where id = ${task.id} and state = ${"waiting"} and lease_owner = ${this.deps.owner}`)
        .catch((e) => {
          // The step is retried and submits again: the job accepted here is known only to this log line.
          this.deps.log.warn("upstream accepted a task its row could not record; upstream job orphaned", {
            task_id: task.id,
            provider: route.provider,
            upstream_ref: r.ref,
            error: maskSecrets(String((e as Error)?.message ?? e)),
          });
          throw e;
        });
      if (recorded !== 1) {
        // The task is no longer ours (its new owner submits it again): this upstream job is paid for and nobody polls
        // it. Nothing to undo here, but the operator must be able to see it.
        this.deps.log.warn("task taken over while its upstream accepted it; upstream job orphaned", {
          task_id: task.id,
          provider: route.provider,
          upstream_ref: r.ref,
        });
        return;
      }
      this.deps.log.info("task submitted", { task_id: task.id, provider: route.provider, route: i });
      if (interrupted) {
        // The earlier job's id died with its owner (or was logged by it as orphaned, should it have lived on).
        this.deps.log.warn("task submitted again after an interrupted submission; the upstream may run it twice", {
          task_id: task.id,
          provider: route.provider,
          upstream_ref: r.ref,
          previous_provider: interrupted,
        });
      }
      return;
    }
    await this.fail(task, "upstream_refused", everyRouteRefusedMessage(refusals).slice(0, 1000));
  }

  /**
   * A synchronous upstream (OpenAI Images) answered with the result, and the operator has paid for it. The row is
   * moved to `generating` with ANSWERED_SYNCHRONOUSLY as its upstream ref before finishing: if finishing throws
   * (storage, the database, a malformed item), the retry finds a task with nothing to poll and fails it with a full
   * refund, instead of submitting it again and paying for a generation every round until the deadline. Keeping the
   * result so that only the finish is retried would need its bytes kept somewhere outside the task row — storage,
   * the very step that may have failed — so the row records only the fact that the upstream has answered.
   */
  private async finishSynchronousResult(task: TaskRow, model: MediaModel, r: Done, lease: Lease): Promise<void> {
    const now = Date.now();
    lease.follow("generating"); // the row stays ours in its new state while the result is stored
    const marked =
      await this.deps.db.run(sql`update tasks set state = ${"generating"}, route_index = ${task.route_index},
        provider = ${task.provider}, upstream_ref = ${ANSWERED_SYNCHRONOUSLY}, updated_at = ${now}
      where id = ${task.id} and state = ${"waiting"} and lease_owner = ${this.deps.owner}`);
    if (marked !== 1)
      return void this.deps.log.warn("task taken over while its upstream answered; result discarded", {
        task_id: task.id,
      });
    return this.end({ ...task, state: "generating", upstream_ref: ANSWERED_SYNCHRONOUSLY }, model, r, lease);
  }

  private async end(task: TaskRow, model: MediaModel, r: Done | Failed, lease: Lease): Promise<void> {
    // The upstream's own text may carry the operator's key or account ids: the customer gets a stable sentence,
    // the log the text with credentials masked.
    if (r.kind === "failed")
      return this.fail(
        task,
        r.code,
        upstreamFailedMessage(task.provider ?? "upstream", r.code),
        maskSecrets(r.message),
      );
    let completed: boolean;
    try {
      completed = await completeTask(this.deps, task, model, r, lease.signal);
    } catch (e) {
      if (!(e instanceof ResultRefused)) throw e; // anything else may pass: retried at the next poll
      return this.fail(task, e.failCode, e.message, e.detail && maskSecrets(e.detail));
    }
    await this.releaseTokenIf(completed, task);
  }

  private failAtDeadline(task: TaskRow): Promise<void> {
    return this.fail(
      task,
      "deadline_exceeded",
      `The task did not complete within ${Math.round((task.deadline_at - task.created_at) / 1000)} s; nothing was charged.`,
    );
  }

  /** `upstreamMessage`: what the upstream said, already masked, for the log only. */
  private async fail(task: TaskRow, code: string, message: string, upstreamMessage?: string): Promise<void> {
    await this.releaseTokenIf(await failTask(this.deps, task, code, message, upstreamMessage), task);
  }

  /** Every final state gives the key's concurrency token back at once (else the key's next task gets 429 until it expires). */
  private async releaseTokenIf(ended: boolean, task: TaskRow): Promise<void> {
    if (ended) await this.unreleased.release(task.key_id, task.id);
  }

  private async reschedule(task: TaskRow, adapter: Adapter): Promise<void> {
    const now = Date.now();
    const attempts = task.attempts + 1;
    const next = Math.min(now + this.delayMs(adapter, attempts), task.deadline_at);
    await this.deps.db.run(sql`update tasks set attempts = ${attempts}, next_poll_at = ${next}, updated_at = ${now},
        lease_owner = ${null}, lease_until = ${null}
      where id = ${task.id} and lease_owner = ${this.deps.owner}`);
  }

  /** A transient problem (network, a download, the database): try again later; the deadline still applies. */
  private async stepFailed(task: TaskRow, e: unknown): Promise<void> {
    if (task.provider) this.deps.metrics.upstreamError(task.provider, "step_failed");
    this.deps.log.warn("task step failed; will retry", {
      task_id: task.id,
      error: maskSecrets(String((e as Error)?.message ?? e)),
    });
    const adapter = this.adapters[(task.provider ?? "kie") as MediaProvider];
    await this.reschedule(task, adapter).catch(() => {});
  }

  private delayMs(adapter: Adapter, attempt: number): number {
    const s = adapter.backoff[Math.min(attempt, adapter.backoff.length - 1)]!;
    return Math.max(10, Math.round(s * 1000 * this.deps.settings.pollScale));
  }
}
