import { refuseModelNotAllowed } from "../accounts/policy";
import type { AuthContext } from "../accounts/service";
import type { AppContext } from "../context";
import { errorResponse } from "../http/base";
import { bodyBytes } from "../http/body-limits";
import { ApiError } from "../http/errors";
import { idempotencyKeyOf, idempotent, type Answer, type Idempotency } from "../http/idempotency";
import { requestBodyOf, withoutBom } from "./body";
import type { Verdict } from "./meter";

// An LLM call sent with an Idempotency-Key (http/idempotency.ts says the rules). Its body is read here, once, to
// fingerprint it, and handed on as it came. What the key keeps follows the call's end as the ledger books it
// (call.ts endCall tells it the verdict), never the answer's status alone; until that end the key is running:
// - posted (charged): the answer is kept. A JSON one is stored as it reached the client (a copy of it is teed off
//   as the client receives it) and replayed; a stream is kept without its body, so its repeat is 409
//   idempotency_replay_unavailable, and it was charged once.
// - voided (nothing charged): the key is freed, so a retry runs afresh: it cannot be charged twice. That is any
//   upstream error status passed on (429, 5xx, 529, and a 4xx too: nothing charged, and a retry costs the
//   upstream call only), a stream the upstream dropped or left silent, an unusable answer.
// - charged, yet answered with an error (a translated answer that could not be translated): that error is kept.
// - the client left before the end of its answer: the key is freed, charged or not (what ran was the client's to
//   abandon). A stream whose end the client had read before leaving is charged as whole, and kept.

const utf8 = new TextDecoder();

/** Runs a call; `onEnd` is to be told the call's verdict when it ends (proxy.ts handleLlm). */
export type LlmRun = (request: Request, onEnd: (verdict: Verdict) => void) => Promise<Response>;

export async function idempotentLlm(
  ctx: AppContext,
  idem: Idempotency,
  request: Request,
  auth: AuthContext,
  headers: Record<string, string>,
  run: LlmRun,
): Promise<Response> {
  idempotencyKeyOf(request.headers); // a malformed key is refused before the body is read
  const bytes = await bodyBytes(request, ctx.config.body);
  refuseReplayOfModelNotAllowed(ctx, auth, bytes);
  const again = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: bytes,
    signal: request.signal,
  });
  const end = callEnd();
  let ran = false;
  const answer = await idempotent(
    idem,
    request,
    auth.accountId,
    () => utf8.decode(bytes),
    () => {
      ran = true;
      return run(again, end.told).catch((e) => chargedError(e, end, request, headers));
    },
    (res) => keptAnswer(res, end),
    (e) => ctx.log.error("idempotent answer not stored", { error: (e as Error)?.message ?? String(e) }),
  );
  // An answer that ran carries the request's headers already; a replay gets them here.
  if (!ran) for (const [name, value] of Object.entries(headers)) answer.headers.set(name, value);
  return answer;
}

/**
 * Idempotency keys are the account's, so a replay may hand one key the answer another key's call was given: a key
 * held to some models is refused a model outside them here, as its own call would be (proxy.ts), before any replay.
 * Anything else wrong with the body is left to the call itself.
 */
function refuseReplayOfModelNotAllowed(ctx: AppContext, auth: AuthContext, bytes: Uint8Array): void {
  if (auth.models === null) return;
  let name: unknown;
  try {
    name = requestBodyOf(withoutBom(bytes)).model;
  } catch {
    return;
  }
  const model = typeof name === "string" ? ctx.catalog.llm.get(name) : undefined;
  if (model) refuseModelNotAllowed(auth.models, name as string, model);
}

/** A call's end: its verdict once told (null until then), and a promise of it. */
interface CallEnd {
  verdict: Verdict | null;
  ended: Promise<Verdict>;
  told(verdict: Verdict): void;
}

function callEnd(): CallEnd {
  const { promise, resolve } = Promise.withResolvers<Verdict>();
  const end: CallEnd = {
    verdict: null,
    ended: promise,
    told(verdict) {
      end.verdict = verdict;
      resolve(verdict);
    },
  };
  return end;
}

/**
 * An error thrown after the call was charged (a translated answer the client could not be given, its usage charged:
 * translated-answer.ts) is the answer the key keeps, as the caller's protocol shapes it; any other error frees the key.
 */
function chargedError(e: unknown, end: CallEnd, request: Request, headers: Record<string, string>): Response {
  if (!(e instanceof ApiError && end.verdict && kept(end.verdict))) throw e;
  return errorResponse(new URL(request.url).pathname, e, headers["x-request-id"]!, headers);
}

/** Whether the key keeps the call's answer: posted, and the client stayed for its end (see the module comment). */
function kept(verdict: Verdict): boolean {
  return verdict.charge !== null && verdict.outcome !== "client_abort";
}

/**
 * What the key keeps of `res`, null to free it. A call that has ended (its answer was whole, or an error) is decided
 * now, before the client has its answer; one still pumping is decided at its end, its JSON copied off meanwhile.
 */
function keptAnswer(res: Response, end: CallEnd): Answer | Promise<Answer | null> | null {
  const { status } = res;
  const contentType = res.headers.get("content-type");
  const stream = contentType?.includes("text/event-stream") ?? false;
  if (end.verdict && !kept(end.verdict)) return null;
  const body = stream ? null : res.clone().text();
  if (end.verdict && body === null) return { status, contentType, body };
  return Promise.all([end.ended, body]).then(([verdict, text]) =>
    kept(verdict) ? { status, contentType, body: text } : null,
  );
}
