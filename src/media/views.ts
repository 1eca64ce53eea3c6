// How a task row looks to callers: the native record (recordInfo's data, also the callback body) and the alias
// status object of GET /v1/tasks/{id}. Result URLs are stored as gateway paths and get PUBLIC_BASE_URL in front here,
// so a changed public address never leaves stale links in old records.
import { MICROS_PER_CREDIT } from "../ledger/units";

export interface TaskRow {
  id: string;
  account_id: string;
  key_id: string;
  model: string;
  state: "waiting" | "generating" | "success" | "fail";
  param: string;
  input: string;
  callback_url: string | null;
  hold_id: string | null;
  estimate: number;
  cost: number | null;
  route_index: number;
  provider: string | null;
  upstream_ref: string | null;
  result_json: string | null;
  fail_code: string | null;
  fail_msg: string | null;
  attempts: number;
  next_poll_at: number;
  deadline_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  results_expire_at: number | null;
  results_expired: number;
  /** the key budget\'s hold (accounts/key-budgets.ts), as JSON; null for a key without a budget */
  budget_hold: string | null;
}

/** Stored result: gateway paths of the copied files. */
export interface StoredResult {
  paths: string[];
}

export function resultUrls(row: TaskRow, publicBaseUrl: string): string[] {
  if (row.state !== "success" || !row.result_json || row.results_expired) return [];
  return (JSON.parse(row.result_json) as StoredResult).paths.map((p) => publicBaseUrl + p);
}

const credits = (micros: number | null) => Math.round((micros ?? 0) / MICROS_PER_CREDIT);

/** The task record of the native API (kie Market's field names), sent to callbacks too. */
export function taskRecord(row: TaskRow, publicBaseUrl: string) {
  const done = row.state === "success" || row.state === "fail";
  const expired = row.results_expired === 1;
  const result =
    row.state === "success"
      ? JSON.stringify(
          expired ? { resultUrls: [], resultsExpired: true } : { resultUrls: resultUrls(row, publicBaseUrl) },
        )
      : "";
  return {
    taskId: row.id,
    model: row.model,
    state: row.state,
    param: row.param,
    resultJson: result,
    failCode: row.fail_code ?? "",
    failMsg: row.fail_msg ?? "",
    costTime: done && row.completed_at ? row.completed_at - row.created_at : 0,
    createTime: row.created_at,
    updateTime: row.updated_at,
    completeTime: row.completed_at,
    creditsConsumed: row.state === "success" ? credits(row.cost) : 0,
    estimatedCredits: credits(row.estimate),
    resultsExpireTime: row.results_expire_at,
    resultsExpired: expired,
  };
}

const ALIAS_STATUS = { waiting: "pending", generating: "processing", success: "succeeded", fail: "failed" } as const;

export function aliasObject(type: string): string {
  return `gateway.${type}.task`;
}

/** The creation answer of the alias endpoints. */
export function aliasCreated(row: Pick<TaskRow, "id" | "model" | "state" | "estimate" | "created_at">, type: string) {
  return {
    id: row.id,
    task_id: row.id,
    object: aliasObject(type),
    status: ALIAS_STATUS[row.state],
    model: row.model,
    estimated_credits: credits(row.estimate),
    created_at: Math.floor(row.created_at / 1000),
  };
}

/** GET /v1/tasks/{id}. */
export function aliasStatus(row: TaskRow, type: string, publicBaseUrl: string) {
  return {
    ...aliasCreated(row, type),
    state: row.state,
    result_urls: resultUrls(row, publicBaseUrl),
    results_expired: row.results_expired === 1,
    results_expire_at: row.results_expire_at ? Math.floor(row.results_expire_at / 1000) : null,
    error: row.state === "fail" ? { code: row.fail_code ?? "failed", message: row.fail_msg ?? "" } : null,
    credits_consumed: row.state === "success" ? credits(row.cost) : 0,
    completed_at: row.completed_at ? Math.floor(row.completed_at / 1000) : null,
  };
}
