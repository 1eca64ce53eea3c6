// The one small interface every media upstream implements. An adapter speaks its upstream's protocol and nothing
// else: pricing, storage, retries across routes, deadlines and callbacks are the engine's.
import type { MediaRoute } from "../model";
import type { MediaSettings } from "../settings";
import { bodyUpTo, guardedFetch, type UrlPolicy } from "../upstream-fetch";

/** A result file as the upstream hands it over: a URL to download (with headers, e.g. Veo's key) or the bytes. */
export interface UpstreamOutput {
  url?: string;
  headers?: Record<string, string>;
  bytes?: Uint8Array;
  contentType?: string;
  /** Length in seconds when the upstream says so (Suno); otherwise the engine reads it from the file. */
  seconds?: number;
}

/** What the upstream reported about the work beyond the files (feeds pricing.actualCost). */
export interface UpstreamFacts {
  seconds?: number;
  upstreamCostUsd?: number;
}

export type Done = { kind: "done"; outputs: UpstreamOutput[]; facts: UpstreamFacts };
export type Failed = { kind: "failed"; code: string; message: string };

export type SubmitResult =
  | { kind: "accepted"; ref: string }
  | Done // synchronous upstreams (OpenAI Images) answer with the result
  | Failed // accepted and failed at once (synchronous generation errors)
  | { kind: "refused"; code: string; message: string }; // not accepted: the engine tries the next route

export type PollResult = { kind: "pending" } | Done | Failed;

export interface SubmitContext {
  taskId: string;
  /** Where an upstream that insists on a callback (kie Suno) may notify us; we still poll. */
  notifyUrl: string;
  /** The task's deadline (ms since the epoch): a synchronous call (OpenAI Images) must not run past it. */
  deadlineAt: number;
}

export interface Adapter {
  submit(route: MediaRoute, input: Record<string, unknown>, ctx: SubmitContext): Promise<SubmitResult>;
  /** `ref` is what submit returned; network errors throw (the engine retries them at the next poll). */
  poll(ref: string): Promise<PollResult>;
  /** Seconds between polls, by poll number (the last value repeats). */
  backoff: number[];
}

export type Upstreams = MediaSettings["upstreams"];

/** The largest API answer read from an upstream (its JSON: a submission's, a poll's). Far above any real one, except
 *  OpenAI Images' base64 results, which pass their own bound. */
export const ANSWER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * fetch with a timeout, JSON in and out; a network failure throws, and so does an answer over `maxBytes` (read no
 * further: an endless answer would otherwise be buffered until the timeout, gigabytes). Redirects are never followed:
 * an API call that redirects is an error, and following it would carry the key to wherever it points. A URL the
 * upstream handed over (`guard` given, GET only) goes through upstream-fetch.ts's guard instead.
 */
export async function callJson(
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    timeoutMs?: number;
    guard?: UrlPolicy;
    maxBytes?: number;
  } = {},
) {
  const signal = AbortSignal.timeout(init.timeoutMs ?? 60_000);
  const res = init.guard
    ? await guardedFetch(url, { headers: init.headers, signal }, init.guard)
    : await fetch(url, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal,
        redirect: "manual",
      });
  const limit = init.maxBytes ?? ANSWER_MAX_BYTES;
  const body = await bodyUpTo(res, limit, () => new Error(`${URL.parse(url)?.host} answered over ${limit} bytes`));
  const text = new TextDecoder().decode(body);
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** A refusal from an HTTP answer: its status and the most useful message in the body. */
export function refusedFrom(status: number, json: any, text: string): SubmitResult {
  const msg =
    json?.error?.message ?? json?.detail?.[0]?.msg ?? json?.detail ?? json?.msg ?? json?.title ?? text.slice(0, 200);
  return { kind: "refused", code: String(status), message: typeof msg === "string" ? msg : JSON.stringify(msg) };
}

export const noKey = (name: string): SubmitResult => ({
  kind: "refused",
  code: "not_configured",
  message: `${name} is not configured on this gateway`,
});
