// Where a model stands with its provider, and the refusal of a model the provider no longer serves. A retired model
// stays in the catalog so a caller still using its id learns which model replaced it (410) instead of having the
// call forwarded to an upstream id that no longer exists.

import { ApiError } from "../http/errors";

export type ModelStatus = "current" | "legacy" | "retired";
export const MODEL_STATUSES: ModelStatus[] = ["current", "legacy", "retired"];

/** The lifecycle fields of a catalog entry (LLM and media alike). Dates are YYYY-MM-DD. */
export interface Lifecycle {
  /** absent in an operator's CATALOG_PATH entry: current */
  status?: ModelStatus;
  /** when the provider released the model */
  released?: string;
  /** the provider's announced last day of service */
  retires_after?: string;
  /** the model to use instead; required for a retired model */
  successor?: string;
  /**
   * the replacement the provider itself names, when the catalog does not sell it (its price could not be confirmed):
   * the 410 says so beside `successor`
   */
  provider_successor?: string;
  /** the provider's own page the prices and limits were read from */
  source?: string;
  /** the day `source` was read */
  checked?: string;
}

export const LIFECYCLE_KEYS = [
  "status",
  "released",
  "retires_after",
  "successor",
  "provider_successor",
  "source",
  "checked",
] as const;

/** A field a bad entry is refused for: the catalog's loader names the file and entry beside it. */
export class FieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A real day written YYYY-MM-DD (Date.parse alone takes 2026-02-30 as March 2). A month or day out of range makes
 * an invalid Date, whose toISOString throws: that is a no too.
 */
export function isDay(v: unknown): v is string {
  if (typeof v !== "string" || !DATE.test(v)) return false;
  const day = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(v);
}

/** The entry's lifecycle, checked (successors are checked once every entry is known: `checkSuccessors`). */
export function lifecycleOf(e: Record<string, unknown>): Lifecycle & { status: ModelStatus } {
  const status = (e.status ?? "current") as ModelStatus;
  if (!MODEL_STATUSES.includes(status)) throw new FieldError("status", `must be one of ${MODEL_STATUSES.join(", ")}`);
  for (const k of ["released", "retires_after", "checked"] as const) {
    const v = e[k];
    if (v !== undefined && !isDay(v)) throw new FieldError(k, "must be a date written YYYY-MM-DD");
  }
  if (e.source !== undefined && (typeof e.source !== "string" || !/^https:\/\/\S+$/.test(e.source)))
    throw new FieldError("source", "must be an https:// URL");
  for (const k of ["successor", "provider_successor"] as const) {
    if (e[k] !== undefined && (typeof e[k] !== "string" || !e[k])) throw new FieldError(k, "must be a model id");
  }
  if (status === "retired" && e.successor === undefined)
    throw new FieldError("successor", "is required for a retired model (the id callers are told to use instead)");
  // A model with a last day of service is retired the day after (Catalog.retireExpired): callers are then sent on.
  if (e.retires_after !== undefined && e.successor === undefined)
    throw new FieldError("successor", "is required with retires_after (the id callers are sent to after that day)");
  const life: Lifecycle & { status: ModelStatus } = { status };
  for (const k of LIFECYCLE_KEYS) if (e[k] !== undefined && k !== "status") (life as any)[k] = e[k];
  return life;
}

/** The UTC day (YYYY-MM-DD) a moment falls on; lifecycles are judged by whole days. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Whether the provider's last day of service is before `day` (Catalog.retireExpired retires such a legacy model). */
export const pastLastDay = (life: Lifecycle, day: string) =>
  life.retires_after !== undefined && day > life.retires_after;

/** Every successor names a model callers can use: one in the catalog that is not retired itself. */
export function checkSuccessors(
  lifecycles: Map<string, Lifecycle & { status: ModelStatus }>,
  fail: (id: string, e: FieldError) => never,
): void {
  for (const [id, life] of lifecycles) {
    if (life.successor === undefined) continue;
    const next = lifecycles.get(life.successor);
    if (!next) fail(id, new FieldError("successor", `${JSON.stringify(life.successor)} is not in the catalog`));
    if (next.status === "retired")
      fail(id, new FieldError("successor", `${JSON.stringify(life.successor)} is retired itself`));
  }
}

/** 410 `model_retired` naming the successor, in whichever error shape the caller speaks (http/surfaces.ts). */
export function retiredError(id: string, life: Lifecycle): ApiError {
  const since = life.retires_after ? ` after ${life.retires_after}` : "";
  const theirs = life.provider_successor
    ? ` (the provider's own replacement, ${life.provider_successor}, is not sold here)`
    : "";
  return new ApiError(
    410,
    "model_retired",
    `Model ${id} was retired by its provider${since} and is no longer served. Use ${life.successor} instead${theirs}.`,
    { param: "model" },
  );
}
