// A task's outcome, completed or failed, each in ONE transaction: the final state change (compare-and-set on state
// and on this worker's lease), the ledger step (its pending transfer posted at the actual cost, or voided), the result
// file rows and the callback outbox row. A task therefore ends charged or refunded, never both, and never stays
// held: if the compare-and-set loses (another worker took the task over), the whole transaction rolls back.
import { sql } from "drizzle-orm";
import { storableText, type Db } from "../db/client";
import { newId, randomToken } from "../db/ids";
import type { Ledger } from "../ledger/service";
import { postBudgetIn, type BudgetHold } from "../accounts/key-budgets";
import type { MediaMetrics } from "./metrics";
import type { Logger } from "../log";
import type { Done } from "./adapters/types";
import type { CostFacts, MediaModel } from "./model";
import { mediaSeconds } from "./probe";
import type { MediaSettings } from "./settings";
import { contentTypeOf, extensionOf, type Storage } from "./storage";
import { guardedFetch, UpstreamUrlRefused } from "./upstream-fetch";
import type { StoredResult, TaskRow } from "./views";

export interface OutcomeDeps {
  db: Db;
  ledger: Ledger;
  storage: Storage;
  settings: MediaSettings;
  log: Logger;
  owner: string;
  metrics: MediaMetrics;
}

class LostLease extends Error {}

/**
 * A result that will be the same at every retry: the task fails at once (refunded) with `failCode` and `message`,
 * instead of being polled again until its deadline.
 */
export class ResultRefused extends Error {
  /** `detail`: for the operator's log only (what was refused, where). */
  constructor(
    readonly failCode: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/**
 * A result URL that answers 404 or 410 (the file is not there) on every try of one step: the upstream said the task
 * is done, yet it has no file to give, and polling again would only hand over the same URL until the deadline. The
 * task fails (refunded) as result_not_stored. A few tries a second or two apart first: a CDN may lag a moment
 * behind the upstream's "done".
 */
class ResultMissing extends ResultRefused {
  constructor(status: number) {
    super(
      "result_not_stored",
      `The upstream reported the task done, but its result file answered ${status}; nothing was charged.`,
    );
  }
}
const MISSING_TRIES = 3;
const MISSING_STATUSES = new Set([404, 410]);

/** A result over RESULT_MAX_FILE_MB: it will be as large at every retry. */
class ResultTooLarge extends ResultRefused {
  constructor(limit: number) {
    super(
      "result_too_large",
      `The upstream's result is larger than this gateway stores (${Math.round(limit / 1024 / 1024)} MB); nothing was charged.`,
    );
  }
}

/** A result URL the gateway will not fetch (upstream-fetch.ts): it will be refused at every retry. */
class ResultUrlRefused extends ResultRefused {
  constructor(detail: string) {
    super(
      "result_url_refused",
      "The upstream's result file is at an address this gateway does not fetch from; nothing was charged.",
      detail,
    );
  }
}

const FALLBACK_TYPE = { images: "image/png", video: "video/mp4", audio: "audio/mpeg" } as const;

interface StoredFile {
  token: string;
  key: string;
  name: string;
  contentType: string;
  bytes: number;
  seconds?: number;
}

/**
 * Download (or take) every output and put it into storage. Throws on a failed download (retried at the next poll),
 * after deleting what this attempt had already stored: each retry stores fresh copies under new tokens. `leaseLost`
 * (lease.ts) stops the work once the task is another worker's: its copies could never be recorded.
 */
export async function storeOutputs(
  deps: OutcomeDeps,
  task: TaskRow,
  model: MediaModel,
  done: Done,
  leaseLost?: AbortSignal,
): Promise<StoredFile[]> {
  const files: StoredFile[] = [];
  try {
    for (const [i, out] of done.outputs.entries()) {
      leaseLost?.throwIfAborted();
      files.push(await storeOutput(deps, model, out, i, leaseLost));
    }
  } catch (e) {
    await deleteStored(deps, files);
    throw e;
  }
  return files;
}

async function storeOutput(
  deps: OutcomeDeps,
  model: MediaModel,
  out: Done["outputs"][number],
  i: number,
  leaseLost?: AbortSignal,
): Promise<StoredFile> {
  const limit = deps.settings.maxFileBytes;
  let bytes = out.bytes;
  let header = out.contentType;
  if (bytes) {
    // Handed over inline (OpenAI Images' base64): the limit bounds what is stored, however it arrived.
    if (bytes.length > limit) throw new ResultTooLarge(limit);
  } else {
    // Longer than the lease may be: the engine keeps the task's lease while this runs.
    const timeout = AbortSignal.timeout(300_000);
    const signal = leaseLost ? AbortSignal.any([timeout, leaseLost]) : timeout;
    const download = () =>
      guardedFetch(out.url!, { headers: out.headers, signal }, deps.settings.upstreamUrls).catch((e) => {
        throw e instanceof UpstreamUrlRefused ? new ResultUrlRefused(e.message) : e;
      });
    let res = await download();
    for (let tried = 1; MISSING_STATUSES.has(res.status) && tried < MISSING_TRIES; tried++) {
      void res.body?.cancel().catch(() => {});
      await Bun.sleep(tried * 1000 * deps.settings.pollScale);
      leaseLost?.throwIfAborted(); // the task is another worker's now: its copies could never be recorded
      res = await download();
    }
    if (MISSING_STATUSES.has(res.status)) throw new ResultMissing(res.status);
    if (!res.ok) throw new Error(`result download answered ${res.status}`); // anything else: retried at the next poll
    bytes = await bodyUpTo(res, limit);
    header = res.headers.get("content-type") ?? header;
  }
  const contentType = contentTypeOf(bytes, header, FALLBACK_TYPE[model.output]);
  const token = randomToken(24);
  const name = `${model.output === "images" ? "image" : model.output}-${i + 1}.${extensionOf(contentType)}`;
  const key = `${token}/${name}`;
  await deps.storage.put(key, bytes, contentType);
  return {
    token,
    key,
    name,
    contentType,
    bytes: bytes.length,
    seconds: out.seconds ?? mediaSeconds(bytes, contentType),
  };
}

/**
 * The body of a result download, refused once it passes `limit` bytes: by its stated length before reading, else
 * as it arrives (a chunked answer states none, and reading it whole first could take any amount of memory).
 */
async function bodyUpTo(res: Response, limit: number): Promise<Uint8Array> {
  const stated = res.headers.get("content-length");
  if (stated !== null && Number(stated) > limit) throw new ResultTooLarge(limit);
  if (stated !== null) return new Uint8Array(await res.arrayBuffer());
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += part.byteLength;
    if (size > limit) throw new ResultTooLarge(limit); // leaving the loop cancels the download
    parts.push(part);
  }
  return new Uint8Array(Bun.concatArrayBuffers(parts));
}

/** Best effort: a file that cannot be deleted now is only wasted space, never a wrong answer. */
async function deleteStored(deps: OutcomeDeps, files: StoredFile[]): Promise<void> {
  for (const f of files) {
    await deps.storage
      .delete(f.key)
      .catch((e) => deps.log.warn("stored result file not deleted", { key: f.key, error: String(e) }));
  }
}

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
  const files = await storeOutputs(deps, task, model, done, leaseLost);
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
  deps.metrics.creditsSettled(cost);
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
