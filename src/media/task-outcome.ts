// A task's outcome, completed or failed, each in ONE transaction: the final state change (compare-and-set on state
// and on this worker's lease), the ledger step (its pending transfer posted at the actual cost, or voided), the rows
// of the result files (stored beforehand by result-files.ts) and the callback outbox row. A task therefore ends
// charged or refunded, never both, and never stays held: if the compare-and-set loses (another worker took the task
// over), the whole transaction rolls back.
import { sql } from "drizzle-orm";
import { storableText, type Db } from "../db/client";
import { newId } from "../db/ids";
import type { Ledger } from "../ledger/service";
import { postBudgetIn, type BudgetHold } from "../accounts/key-budgets";
import type { MediaMetrics } from "./metrics";
import type { Done } from "./adapters/types";
import type { CostFacts, MediaModel } from "./model";
import { deleteStored, type ResultFileDeps, type StoredFile, storeOutputs } from "./result-files";
import type { StoredResult, TaskRow } from "./views";

export interface OutcomeDeps extends ResultFileDeps {
  db: Db;
  ledger: Ledger;
  owner: string;
  metrics: MediaMetrics;
}

class LostLease extends Error {}

/** What was really produced, for pricing: image count, length (upstream-reported, else read from the file), cost. */
export function factsOf(model: MediaModel, files: StoredFile[], done: Done): CostFacts {
  const facts: CostFacts = {};
  if (model.output === "images") facts.images = files.length;
  const seconds = done.facts.seconds ?? files[0]?.seconds;
  if (model.output !== "images" && seconds !== undefined) facts.seconds = seconds;
  if (done.facts.upstreamCostUsd !== undefined) facts.upstreamCostUsd = done.facts.upstreamCostUsd;
  return facts;
}

/**
 * The cost of what was produced. Should the result not be priceable (a defect: its input was validated and
 * estimated when the task was created), it is charged at that estimate, what the caller agreed to, and the operator
 * is told: thrown, it would be polled and downloaded again at every round until the task's deadline, for nothing.
 */
function resultCost(deps: OutcomeDeps, task: TaskRow, model: MediaModel, facts: CostFacts): number {
  try {
    return model.actual(JSON.parse(task.input), facts);
  } catch (e) {
    deps.log.error("media result could not be priced; charged its estimate", {
      task_id: task.id,
      model: model.id,
      error: (e as Error).message,
    });
    return task.estimate;
  }
}

/** success + the hold posted at the cost + result files + callback row, atomically. Returns false when the task was no longer ours. */
export async function completeTask(
  deps: OutcomeDeps,
  task: TaskRow,
  model: MediaModel,
  done: Done,
  leaseLost?: AbortSignal,
): Promise<boolean> {
  const files = await storeOutputs(deps, task.id, model, done, leaseLost);
  const now = Date.now();
  const expires = now + deps.settings.retentionMs;
  const result: StoredResult = { paths: files.map((f) => `/files/${f.token}/${f.name}`) };
  const { ledger, owner } = deps;
  let cost: number;
  // Until the transaction commits, no row points at these files: on ANY error (pricing, the database, a lost lease)
  // they are deleted, or each retry would leave another orphaned copy in storage.
  try {
    // Never above the estimate held at creation: the catalog's prices may have changed since (a deploy while the task
    // ran), and the caller agreed to that estimate (and checked it against its max_credits).
    cost = Math.min(resultCost(deps, task, model, factsOf(model, files, done)), task.estimate);
    await deps.db.tx(function* (q) {
      const changed =
        yield* q.run(sql`update tasks set state = ${"success"}, cost = ${cost}, result_json = ${JSON.stringify(result)},
          completed_at = ${now}, updated_at = ${now}, results_expire_at = ${expires}, lease_owner = ${null}, lease_until = ${null}
        where id = ${task.id} and state = ${task.state} and lease_owner = ${owner}`);
      if (changed !== 1) throw new LostLease();
      for (const f of files) {
        yield* q.run(sql`insert into result_files (id, task_id, account_id, storage_key, content_type, bytes, created_at, expires_at)
          values (${f.token}, ${task.id}, ${task.account_id}, ${f.key}, ${f.contentType}, ${f.bytes}, ${now}, ${expires})`);
      }
      if (task.hold_id) yield* ledger.postIn(q, task.hold_id, cost, `task ${task.id} ${task.model}`);
      yield* postTaskBudgetIn(q, task, cost);
      if (task.callback_url) yield* queueCallback(q, task, now);
    });
  } catch (e) {
    await deleteStored(deps, files);
    if (!(e instanceof LostLease)) throw e;
    deps.log.warn("task taken over before completion; result discarded", { task_id: task.id });
    return false;
  }
  deps.metrics.creditsPosted(cost);
  deps.log.info("task succeeded", {
    task_id: task.id,
    model: task.model,
    provider: task.provider,
    cost_credits: cost / 1e6,
  });
  return true;
}

/** fail + the hold voided + callback row, atomically. `upstreamMessage` (masked) goes to the log, never the record. */
export async function failTask(
  deps: OutcomeDeps,
  task: TaskRow,
  code: string,
  message: string,
  upstreamMessage?: string,
): Promise<boolean> {
  const now = Date.now();
  const { ledger, owner } = deps;
  const ok = await deps.db.tx(function* (q) {
    const changed =
      yield* q.run(sql`update tasks set state = ${"fail"}, fail_code = ${storableText(code.slice(0, 200))}, fail_msg = ${storableText(message.slice(0, 1000))},
        cost = ${0}, completed_at = ${now}, updated_at = ${now}, lease_owner = ${null}, lease_until = ${null}
      where id = ${task.id} and state = ${task.state} and lease_owner = ${owner}`);
    if (changed !== 1) return false;
    if (task.hold_id) yield* ledger.voidIn(q, task.hold_id);
    yield* postTaskBudgetIn(q, task, 0);
    if (task.callback_url) yield* queueCallback(q, task, now);
    return true;
  });
  if (ok)
    deps.log.info("task failed", {
      task_id: task.id,
      model: task.model,
      provider: task.provider,
      code,
      message,
      ...(upstreamMessage ? { upstream_message: upstreamMessage } : {}),
    });
  return ok;
}

/** The task's key-budget hold moved to what it cost, in the transaction that ends the task (so exactly once). */
function* postTaskBudgetIn(q: Parameters<Parameters<Db["tx"]>[0]>[0], task: TaskRow, cost: number) {
  if (!task.budget_hold) return;
  const held = JSON.parse(task.budget_hold) as BudgetHold;
  yield* postBudgetIn(q, held.keyId, held.periods, cost - held.amount);
}

function* queueCallback(q: Parameters<Parameters<Db["tx"]>[0]>[0], task: TaskRow, now: number) {
  yield* q.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
    values (${newId("cbd")}, ${task.id}, ${task.account_id}, ${task.callback_url}, ${1}, ${"pending"}, ${now}, ${now})`);
}
