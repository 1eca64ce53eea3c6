// Callback delivery from the outbox table callback_deliveries, one row per attempt. A due `pending` row is claimed by
// compare-and-set on next_attempt_at (two workers never send the same attempt), POSTed, and ends `delivered` or
// `failed`; a failure queues the next attempt with a doubling wait up to CALLBACK_MAX_ATTEMPTS. Any due pending row is
// sent, so an operator's "redeliver" is simply a new pending row.

import { sql } from "drizzle-orm";
import { SealedSecretError } from "../accounts/secret-box";
import { signCallback } from "./callback-signing";
import type { MediaMetrics } from "./metrics";
import { storableText, type Db } from "../db/client";
import { newId } from "../db/ids";
import type { Logger } from "../log";
import type { MediaSettings } from "./settings";
import { pinnedFetch, type PinnedTls } from "./pinned-fetch";
import { resolveCallbackUrl, type Resolver } from "./ssrf";
import { taskRecord, type TaskRow } from "./views";

export interface CallbackDeps {
  db: Db;
  settings: MediaSettings;
  log: Logger;
  metrics: MediaMetrics;
  webhookSecret(accountId: string): Promise<string | null>;
  /** How receivers are reached; unset in production (system DNS, 5 s DNS timeout, the usual CAs). Tests set it. */
  callbackNetwork?: CallbackNetwork;
}

export interface CallbackNetwork {
  resolve?: Resolver;
  dnsTimeoutMs?: number;
  tls?: PinnedTls;
}

interface DeliveryRow {
  id: string;
  task_id: string;
  account_id: string;
  url: string;
  attempt: number;
  next_attempt_at: number;
}

/** Claim due deliveries and start sending them; returns the sends in progress. */
export async function deliverDue(deps: CallbackDeps, limit = 20): Promise<Promise<void>[]> {
  const now = Date.now();
  const due =
    await deps.db.all<DeliveryRow>(sql`select id, task_id, account_id, url, attempt, next_attempt_at from callback_deliveries
    where state = ${"pending"} and next_attempt_at <= ${now} order by next_attempt_at limit ${limit}`);
  const mine: DeliveryRow[] = [];
  for (const d of due) {
    // Claim: push next_attempt_at past the send timeout; whoever changes the row owns this attempt.
    const claimed =
      await deps.db.run(sql`update callback_deliveries set next_attempt_at = ${now + deps.settings.callbacks.timeoutMs + 30_000}
      where id = ${d.id} and state = ${"pending"} and next_attempt_at = ${d.next_attempt_at}`);
    if (claimed === 1) mine.push(d);
  }
  return mine.map((d) =>
    deliver(deps, d).catch((e) => deps.log.error("callback send failed", { delivery: d.id, error: String(e) })),
  );
}

// Signed (when the account has a webhook signing key) with X-Webhook-Timestamp = Unix seconds and X-Webhook-Signature
// = base64(HMAC-SHA256(key, `${taskId}.${timestamp}`)). The URL is re-checked before each attempt and the request
// goes to the very addresses that check approved (ssrf.ts, pinned-fetch.ts). A DNS failure or timeout is retried
// like a receiver error; a URL that now resolves to a non-public address is refused for good.
/** One signed POST of the task's record: [the receiver's status, the attempt's error or null]. */
async function send(
  deps: CallbackDeps,
  task: TaskRow,
  target: { url: URL; addresses: string[] },
): Promise<[number | null, string | null]> {
  const { settings } = deps;
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "Switchyard-Webhook/1" };
  let secret: string | null;
  try {
    secret = await deps.webhookSecret(task.account_id);
  } catch (e) {
    // Never sent unsigned: a failed attempt the operator sees (SECRETS_KEY lost a key the database still uses).
    if (e instanceof SealedSecretError)
      return [null, `not sent: the account's webhook signing key could not be opened (${e.message})`];
    throw e;
  }
  if (secret) Object.assign(headers, signCallback(secret, task.id, Date.now() / 1000));
  try {
    const init = {
      method: "POST",
      headers,
      body: JSON.stringify(taskRecord(task, settings.publicBaseUrl)),
      signal: AbortSignal.timeout(settings.callbacks.timeoutMs),
    };
    const res = await pinnedFetch(target.url, target.addresses, init, deps.callbackNetwork?.tls);
    await res.body?.cancel().catch(() => {});
    return [res.status, res.status < 200 || res.status >= 300 ? `receiver answered ${res.status}` : null];
  } catch (e) {
    return [
      null,
      (e as Error).name === "TimeoutError"
        ? `no answer within ${settings.callbacks.timeoutMs / 1000} s`
        : String((e as Error).message ?? e),
    ];
  }
}

async function deliver(deps: CallbackDeps, d: DeliveryRow): Promise<void> {
  const { settings, db } = deps;
  const started = Date.now();
  let status: number | null = null;
  let error: string | null = null;
  let retry = true;
  const net = deps.callbackNetwork ?? {};
  const task = await db.get<TaskRow>(sql`select * from tasks where id = ${d.task_id}`);
  const target = task
    ? await resolveCallbackUrl(d.url, settings.callbacks.allowPrivate, {
        resolve: net.resolve,
        timeoutMs: net.dnsTimeoutMs,
      })
    : undefined;
  if (!task || !target) {
    [error, retry] = ["task no longer exists", false];
  } else if (!target.ok) {
    // Refused: the address turned private after creation. Not resolving (yet) is a failed attempt like any other.
    [error, retry] = target.retryable
      ? [`callback URL ${target.reason}`, true]
      : [`refused: callback URL ${target.reason}`, false];
  } else {
    [status, error] = await send(deps, task, target);
  }
  const now = Date.now();
  const ok = error === null;
  const again = !ok && retry && d.attempt < settings.callbacks.maxAttempts;
  const wait = settings.callbacks.retryBaseMs * 2 ** (d.attempt - 1);
  deps.metrics.callback(ok ? "delivered" : again ? "retry" : "failed");
  await db.tx(function* (q) {
    yield* q.run(sql`update callback_deliveries set state = ${ok ? "delivered" : "failed"}, status_code = ${status}, error = ${error && storableText(error)},
      duration_ms = ${now - started}, next_attempt_at = ${null} where id = ${d.id}`);
    if (again) {
      yield* q.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
        values (${newId("cbd")}, ${d.task_id}, ${d.account_id}, ${d.url}, ${d.attempt + 1}, ${"pending"}, ${now}, ${now + wait})`);
    }
  });
  const detail = target && !target.ok ? target.detail : undefined;
  if (!ok)
    deps.log.warn("callback delivery failed", {
      task_id: d.task_id,
      attempt: d.attempt,
      status,
      error,
      ...(detail ? { detail } : {}),
      retry_in_ms: again ? wait : null,
    });
}
