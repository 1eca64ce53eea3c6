// Spare room asked back across processes. Only the process that holds a float can shrink it (it lends from it in
// memory), so a process short of credits for a call marks the other floats on the wallet (`holds.asked_at`, one row
// per statement, outside its group commit: holding another lock meanwhile could close a deadlock); each process looks
// for marks every ASK_POLL_MS and answers at its next commit with all its spare room. The wallet then stays *lean* on
// both for LEAN_MS: no spare room kept there. docs/architecture.md ("The float") has the whole protocol.

import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { Float } from "./float";

/** How often a process looks for asks on its floats. */
export const ASK_POLL_MS = 50;
/** How long a call waits for floats it asked to answer before it is refused without them. */
export const ASK_WAIT_MS = 1000;
/** Between two tries of a call waiting for answers. */
export const ASK_RETRY_MS = 25;
/** How long a wallet stays lean in a process after an ask about it was made or seen. */
export const LEAN_MS = 10_000;

const param = sql.placeholder;
const PEERS = sql`select id from holds
  where account_id = ${param("account")} and kind = ${"float"} and status = ${"pending"} and amount > ${0} and id <> ${param("own")}`;
// A float already asked keeps the time of its first ask: one that has not answered within ASK_WAIT_MS (its process
// is gone) is not waited for again by every later call on the wallet, until the sweeper voids it.
const ASK = sql`update holds set asked_at = ${param("now")} where id = ${param("id")} and status = ${"pending"} and asked_at is null`;
/**
 * Read first in the commit that tries again: zero means every float asked since `since` (ASK_WAIT_MS ago) has
 * answered (its trim is committed), or was asked longer ago and is left out.
 */
export const PEERS_ASKED = sql`select count(*) as n from holds
  where account_id = ${param("account")} and kind = ${"float"} and status = ${"pending"} and asked_at >= ${param("since")} and id <> ${param("own")}`;
/** In the commit that gives the spare room back. */
export const ANSWER_ASK = sql`update holds set asked_at = ${null} where id = ${param("id")}`;
/**
 * Every float asked now, of any process: each process keeps its own. Read through the `holds_asked` index, which
 * holds only these (its condition written out, not bound, so that SQLite's planner can see the query implies it).
 */
const ASKED = sql`select id, account_id from holds where asked_at is not null and status = 'pending' and kind = ${"float"}`;

/** Which wallets this process keeps lean, and the database side of asking. */
export class FloatAsks {
  private leanUntil = new Map<string, number>();

  constructor(
    private db: Pick<Db, "run" | "all" | "get">,
    /** runs database work when no other ledger transaction of this process is under way (GroupCommit.exclusive) */
    private exclusive: <T>(run: () => Promise<T>) => Promise<T> = (run) => run(),
  ) {}

  isLean(accountId: string): boolean {
    const until = this.leanUntil.get(accountId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.leanUntil.delete(accountId);
    return false;
  }

  makeLean(accountId: string): void {
    this.leanUntil.set(accountId, Date.now() + LEAN_MS);
  }

  /**
   * Marks the other floats on the wallet (not `ownHoldId`) as asked; returns how many are now waited for (asked
   * within ASK_WAIT_MS). The wallet goes lean here only when there was one: a single process refusing a call keeps its
   * float as it was.
   */
  async ask(accountId: string, ownHoldId: string): Promise<number> {
    const marked = await this.exclusive(async () => {
      for (const { id } of await this.db.all<{ id: string }>(PEERS, { account: accountId, own: ownHoldId })) {
        await this.db.run(ASK, { now: Date.now(), id });
      }
      return this.unanswered(accountId, ownHoldId);
    });
    if (marked > 0) this.makeLean(accountId);
    return marked;
  }

  /** Asks, then waits until every float asked has answered, ASK_WAIT_MS at most. False when there was none to ask. */
  async askAndWait(accountId: string, ownHoldId: string, markWithinMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    // Marking waits for this process's ledger transaction under way: one held up elsewhere (a lock on another
    // wallet) must not hold up a caller that has a deadline (an admin correction, a media task).
    const marking = this.ask(accountId, ownHoldId);
    const late = Number.isFinite(markWithinMs) ? Bun.sleep(markWithinMs).then(() => 0) : null;
    const marked = late ? await Promise.race([marking.catch(() => 0), late]) : await marking;
    if (!marked) return false;
    const until = Date.now() + ASK_WAIT_MS;
    while (Date.now() < until && (await this.unanswered(accountId, ownHoldId)) > 0) await Bun.sleep(ASK_RETRY_MS);
    return true;
  }

  /** How many of the other floats on the wallet (not `ownHoldId`) are still asked, since ASK_WAIT_MS ago. */
  async unanswered(accountId: string, ownHoldId: string): Promise<number> {
    const since = Date.now() - ASK_WAIT_MS;
    return Number(
      (await this.db.get<{ n: number }>(PEERS_ASKED, { account: accountId, own: ownHoldId, since }))?.n ?? 0,
    );
  }

  /** This process's floats (by wallet) another process has asked. */
  async asked(floats: ReadonlyMap<string, Float>): Promise<Float[]> {
    const rows = await this.db.all<{ id: string; account_id: string }>(ASKED);
    const out: Float[] = [];
    for (const row of rows) {
      const float = floats.get(row.account_id);
      if (float && float.holdId === row.id && !float.closed) out.push(float);
    }
    return out;
  }
}
