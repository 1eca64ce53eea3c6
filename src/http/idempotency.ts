import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { sha256Hex } from "../db/ids";
import { ApiError } from "./errors";

// Idempotency-Key (the IETF httpapi draft, with Stripe's semantics) on the POSTs that can cost money: the LLM
// endpoints and task creation on both doors. The first request with a key runs; a repeat with the same body within
// IDEMPOTENCY_TTL_MS gets the first one's answer (stored in the database, so any process answers it); while the first
// still runs, 409 idempotency_in_progress; a repeat with another body is 422 idempotency_key_reused. Keys are the
// account's: another account's same key is another request. What a request that ran keeps is its caller's to say
// (`answerOf`): an LLM call keeps what the ledger booked (llm/idempotent.ts: a charged answer, a charged stream
// without its body, whose repeat is 409 idempotency_replay_unavailable; nothing for a call that charged nothing).
// A request refused before it ran (an ApiError thrown: bad input, no credits) or whose client left first keeps
// nothing, so a retry runs afresh; nothing ran, or what ran was the client's to abandon. Taking the key is one
// guarded insert, so concurrent duplicates run once.

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A request still "running" after this was lost with its process (a crash): its key may run again. */
export const STALE_RUNNING_MS = 3_600_000;
const MAX_KEY_LENGTH = 255;

export interface Answer {
  status: number;
  contentType: string | null;
  body: string | null;
}

export type Begun =
  | { run: true; remember(a: Answer): Promise<void>; abandon(): Promise<void> }
  | { run: false; replay: Response };

/** The request's Idempotency-Key, undefined without one; 422 naming the header when empty or too long. */
export function idempotencyKeyOf(headers: Headers): string | undefined {
  const key = headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return undefined;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH)
    throw new ApiError(422, "invalid_request", `Idempotency-Key: must be 1 to ${MAX_KEY_LENGTH} characters.`, {
      param: "Idempotency-Key",
    });
  return key;
}

export class Idempotency {
  constructor(
    private db: Db,
    private clock: () => number = Date.now,
  ) {}

  /** Takes `key` for this request (fingerprint: what identifies its content), or answers a repeat. */
  async begin(accountId: string, key: string, fingerprint: string): Promise<Begun> {
    const fp = sha256Hex(fingerprint);
    const now = this.clock();
    const expires = now + IDEMPOTENCY_TTL_MS;
    const taken =
      (await this.db.run(sql`insert into idempotency_keys (account_id, key, fingerprint, state, created_at, expires_at)
        values (${accountId}, ${key}, ${fp}, ${"running"}, ${now}, ${expires}) on conflict (account_id, key) do nothing`)) ===
        1 ||
      // An expired key is free again, as is one whose request was lost with its process: taken by whichever request
      // moves it first.
      (await this.db.run(sql`update idempotency_keys set fingerprint = ${fp}, state = ${"running"}, status = ${null}, content_type = ${null}, body = ${null},
        created_at = ${now}, expires_at = ${expires} where account_id = ${accountId} and key = ${key}
          and (expires_at <= ${now} or (state = ${"running"} and created_at <= ${now - STALE_RUNNING_MS}))`)) === 1;
    if (taken) return this.running(accountId, key, fp, now);
    const row = await this.db.get<{
      fingerprint: string;
      state: string;
      status: number | null;
      content_type: string | null;
      body: string | null;
    }>(
      sql`select fingerprint, state, status, content_type, body from idempotency_keys where account_id = ${accountId} and key = ${key}`,
    );
    if (!row) return this.begin(accountId, key, fingerprint); // abandoned meanwhile: try again
    if (row.fingerprint !== fp)
      throw new ApiError(
        422,
        "idempotency_key_reused",
        "This Idempotency-Key was used with a different request in the last 24 hours; use a new key for a new request.",
        { param: "Idempotency-Key" },
      );
    if (row.state === "running")
      throw new ApiError(
        409,
        "idempotency_in_progress",
        "A request with this Idempotency-Key is still running; retry when it has finished to get its answer.",
        { type: "conflict" },
      );
    if (row.body === null)
      throw new ApiError(
        409,
        "idempotency_replay_unavailable",
        "A request with this Idempotency-Key finished as a stream, which is not stored for replay; it was charged once. Use a new key for a new request.",
        { type: "conflict" },
      );
    const headers: Record<string, string> = { "idempotent-replayed": "true" };
    if (row.content_type) headers["content-type"] = row.content_type;
    return { run: false, replay: new Response(row.body, { status: Number(row.status), headers }) };
  }

  /** Forgets expired keys (the server's sweeper); returns how many. */
  sweepExpired(now = this.clock()): Promise<number> {
    return this.db.run(sql`delete from idempotency_keys where expires_at <= ${now}`);
  }

  /**
   * The key as this request took it (`takenAt`): a request taken for lost (STALE_RUNNING_MS) that ends after all
   * must not store or free the key of the one that took it over.
   */
  private running(accountId: string, key: string, fp: string, takenAt: number): Begun {
    const where = sql`account_id = ${accountId} and key = ${key} and fingerprint = ${fp} and state = ${"running"} and created_at = ${takenAt}`;
    return {
      run: true,
      remember: async (a) => {
        await this.db.run(
          sql`update idempotency_keys set state = ${"done"}, status = ${a.status}, content_type = ${a.contentType}, body = ${a.body} where ${where}`,
        );
      },
      abandon: async () => {
        await this.db.run(sql`delete from idempotency_keys where ${where}`);
      },
    };
  }
}

/**
 * Runs `handler` under the request's Idempotency-Key, if it has one. `answerOf` turns what the handler returned into
 * what is stored (null: nothing, and the key is free again, e.g. a client that left); an answer stored with a null
 * body (a stream) is not replayed: its repeat is 409. An answer known at once is stored (or the key freed) before
 * the handler's result is returned; one known later (an LLM call still streaming, a JSON answer read to its end) is
 * stored when it is, and until then a repeat is told it is in progress.
 */
export async function idempotent<T>(
  idem: Idempotency,
  request: Request,
  accountId: string,
  fingerprint: () => string | Promise<string>,
  handler: () => Promise<T>,
  answerOf: (result: T) => Promise<Answer | null> | Answer | null,
  onError: (e: unknown) => void,
): Promise<T | Response> {
  const key = idempotencyKeyOf(request.headers);
  if (key === undefined) return handler();
  const begun = await idem.begin(
    accountId,
    key,
    `${request.method} ${new URL(request.url).pathname}\n${await fingerprint()}`,
  );
  if (!begun.run) return begun.replay;
  let result: T;
  try {
    result = await handler();
  } catch (e) {
    await begun.abandon();
    throw e;
  }
  const store = (a: Answer | null) => (a ? begun.remember(a) : begun.abandon());
  const answer = answerOf(result);
  if (answer instanceof Promise) void answer.then(store, () => begun.abandon()).catch(onError);
  else await store(answer);
  return result;
}
