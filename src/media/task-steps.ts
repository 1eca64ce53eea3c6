// One step of a claimed task (engine.ts claims it and keeps its lease): submit along the model's routes, or poll
// the upstream that has it, and end the step: completed or failed through task-outcome.ts, or rescheduled with the
// provider's backoff. Every write is guarded by `lease_owner = me`: a step whose task was taken over changes nothing.
import { sql } from "drizzle-orm";
import type { Catalog } from "../catalog/service";
import { storableText } from "../db/client";
import type { TokenReleases } from "../limits/task-tokens";
import type { Adapter } from "./adapters/index";
import type { Done, Failed, SubmitResult } from "./adapters/types";
import type { Lease } from "./lease";
import type { MediaModel, MediaProvider, MediaRoute } from "./model";
import { ResultRefused } from "./result-files";
import { completeTask, failTask, type OutcomeDeps } from "./task-outcome";
import { everyRouteRefusedMessage, maskSecrets, upstreamFailedMessage } from "./upstream-errors";
import type { TaskRow } from "./views";

export interface StepDeps extends OutcomeDeps {
  catalog: Catalog;
}

/** upstream_ref of a task whose upstream answered with the result itself (see finishSynchronousResult). */
const ANSWERED_SYNCHRONOUSLY = "answered-synchronously";
/** upstream_ref of a waiting task while a submission is under way: `submitting:<route index>:<provider>` (see submit). */
const SUBMITTING = "submitting:";
/** What sendTo answers when a submission outlived the task's deadline. */
const PAST_DEADLINE = "past-deadline";

export class TaskSteps {
  constructor(
    private deps: StepDeps,
    private adapters: Record<MediaProvider, Adapter>,
    /** Gives tokens back, retried at every round while refused (the engine owns it). */
    private tokenReleases: TokenReleases,
  ) {}

  async step(task: TaskRow, lease: Lease): Promise<void> {
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
    const interrupted = this.interruptedSubmission(task);
    for (let i = task.route_index; i < model.routes.length; i++) {
      // The new owner submits the task itself: one more route tried here would be a second paid generation.
      if (lease.lost)
        return void this.deps.log.warn("task taken over while its routes were tried; not submitted again", {
          task_id: task.id,
        });
      const route = model.routes[i]!;
      const marked =
        await this.deps.db.run(sql`update tasks set upstream_ref = ${`${SUBMITTING}${i}:${route.provider}`}, updated_at = ${Date.now()}
        where id = ${task.id} and state = ${"waiting"} and lease_owner = ${this.deps.owner}`);
      if (marked !== 1)
        return void this.deps.log.warn("task taken over before its submission; not submitted", { task_id: task.id });
      const r = await this.sendTo(task, route, input);
      if (r === PAST_DEADLINE) return this.failAtDeadline(task);
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
      if (await this.refUsedElsewhere(task.id, route.provider, r.ref)) return this.failReusedRef(at, r.ref);
      return this.recordAccepted(at, route.provider, r.ref, interrupted);
    }
    await this.fail(task, "upstream_refused", everyRouteRefusedMessage(refusals).slice(0, 1000));
  }

  /** The provider of a submission whose owner died before recording its answer (logged and counted), or null. */
  private interruptedSubmission(task: TaskRow): string | null {
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
    return interrupted;
  }

  /** The route's answer; a throw counts as a refusal (`network`), unless the call outlived the task's deadline. */
  private async sendTo(
    task: TaskRow,
    route: MediaRoute,
    input: Record<string, unknown>,
  ): Promise<SubmitResult | typeof PAST_DEADLINE> {
    const notifyUrl = `${this.deps.settings.publicBaseUrl}/v1/media/upstream-events/${route.provider}`;
    try {
      return await this.adapters[route.provider].submit(route, input, {
        taskId: task.id,
        notifyUrl,
        deadlineAt: task.deadline_at,
      });
    } catch (e) {
      // A synchronous call cut at the deadline (or any call that outlived it): no next route, the task is over.
      if (Date.now() >= task.deadline_at) return PAST_DEADLINE;
      return { kind: "refused" as const, code: "network", message: String((e as Error).message ?? e) };
    }
  }

  /** Whether another task already has the job `ref` of `provider`: polling it would hand this task that one's result. */
  private async refUsedElsewhere(taskId: string, provider: MediaProvider, ref: string): Promise<boolean> {
    const other = await this.deps.db.get<{ id: string }>(
      sql`select id from tasks where upstream_ref = ${storableText(ref)} and provider = ${provider} and id <> ${taskId} limit 1`,
    );
    return other !== undefined;
  }

  /** An upstream that answers with a job id it gave another task (a bug, a replayed answer): this task is refunded. */
  private async failReusedRef(task: TaskRow, ref: string): Promise<void> {
    this.deps.log.error("upstream answered a submission with another task's job id; task failed", {
      task_id: task.id,
      provider: task.provider,
      upstream_ref: ref,
    });
    return this.fail(
      task,
      "upstream_ref_reused",
      `The upstream (${task.provider}) answered with a job of another task; nothing was charged.`,
    );
  }

  /** The upstream accepted the task as job `ref`: the row records it and the task is polled from now on. */
  private async recordAccepted(
    task: TaskRow,
    provider: MediaProvider,
    ref: string,
    interrupted: string | null,
  ): Promise<void> {
    const now = Date.now();
    const nextPoll = now + this.delayMs(this.adapters[provider], 0);
    const recorded = await this.deps.db
      .run(sql`update tasks set state = ${"generating"}, route_index = ${task.route_index}, provider = ${provider},
          upstream_ref = ${storableText(ref)}, attempts = ${0}, next_poll_at = ${nextPoll}, updated_at = ${now},
          lease_owner = ${null}, lease_until = ${null}
        where id = ${task.id} and state = ${"waiting"} and lease_owner = ${this.deps.owner}`)
      .catch((e) => {
        // The step is retried and submits again: the job accepted here is known only to this log line.
        this.deps.log.warn("upstream accepted a task its row could not record; upstream job orphaned", {
          task_id: task.id,
          provider,
          upstream_ref: ref,
          error: maskSecrets(String((e as Error)?.message ?? e)),
        });
        throw e;
      });
    if (recorded !== 1) {
      // The task is no longer ours (its new owner submits it again): this upstream job is paid for and nobody polls
      // it. Nothing to undo here, but the operator must be able to see it.
      this.deps.log.warn("task taken over while its upstream accepted it; upstream job orphaned", {
        task_id: task.id,
        provider,
        upstream_ref: ref,
      });
      return;
    }
    this.deps.log.info("task submitted", { task_id: task.id, provider, route: task.route_index });
    if (interrupted) {
      // The earlier job's id died with its owner (or was logged by it as orphaned, should it have lived on).
      this.deps.log.warn("task submitted again after an interrupted submission; the upstream may run it twice", {
        task_id: task.id,
        provider,
        upstream_ref: ref,
        previous_provider: interrupted,
      });
    }
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
    if (ended) await this.tokenReleases.release(task.key_id, task.id);
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
  async stepFailed(task: TaskRow, e: unknown): Promise<void> {
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
