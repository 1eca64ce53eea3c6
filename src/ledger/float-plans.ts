// What a group commit asks of the floats besides the calls' ends (llm-ledger.ts): growth for calls the
// float could not cover, top-ups of floats running low, trims of floats holding more than they use, and resyncs of
// floats whose hold may hold more than they know. Worked out in memory from this process's floats, just before each
// commit. A lean wallet (ledger/float-asks.ts: another process found it short) gets no spare room at all: growth
// without headroom, no top-ups, and every commit trims its float back to the calls in flight.

import { newId } from "../db/ids";
import {
  HEADROOM_SHARE,
  type Float,
  type FloatBatch,
  type FloatGrow,
  type FloatTrim,
  type ReservationEnd,
} from "./float";

type IsLean = (accountId: string) => boolean;

/**
 * One growth request per wallet: what its waiters need beyond the float's free part, and room to spare (none on a
 * lean wallet). `asked`: some of its waiters have asked other processes for their spare room.
 */
export function growsFor(
  floats: Map<string, Float>,
  waiters: ReadonlyArray<{ accountId: string; amount: number; asked: number | null }>,
  isLean: IsLean,
): FloatGrow[] {
  const byAccount = new Map<string, { amounts: number[]; asked: boolean }>();
  for (const waiter of waiters) {
    let wallet = byAccount.get(waiter.accountId);
    if (!wallet) byAccount.set(waiter.accountId, (wallet = { amounts: [], asked: false }));
    wallet.amounts.push(waiter.amount);
    wallet.asked ||= waiter.asked !== null;
  }
  return [...byAccount].map(([accountId, { amounts, asked }]) => {
    const float = floats.get(accountId) ?? null;
    const total = amounts.reduce((sum, amount) => sum + amount, 0);
    const free = float && !float.closed ? Math.max(0, float.free) : 0;
    const need = total - free; // > 0: commit() served the waiters the float covers
    const headroom = isLean(accountId) ? 0 : Math.max(need, float?.size ?? 0);
    return { accountId, float, need, free, headroom, amounts, newHoldId: newId("hold"), asked };
  });
}

/**
 * Floats running low, topped up in this commit so that the next calls need not wait for one (a float's spare room
 * is used up by its calls' charges). Low: less spare room than its calls in flight hold. Topped up by that much
 * again (growth caps it, as any headroom, at a quarter of what the wallet has beyond it).
 */
export function refills(floats: Map<string, Float>, growing: Set<string>, isLean: IsLean): FloatGrow[] {
  const out: FloatGrow[] = [];
  for (const float of floats.values()) {
    if (float.closed || float.free >= float.reserved || growing.has(float.accountId) || isLean(float.accountId))
      continue;
    out.push({
      accountId: float.accountId,
      float,
      need: 0,
      free: Math.max(0, float.free),
      headroom: float.reserved,
      amounts: [],
      newHoldId: newId("hold"),
    });
  }
  return out;
}

/**
 * Floats holding far more spare room than they use, and more than their share of the wallet, trimmed back: a
 * call's reservation stays in the float when it ends (only its charge leaves), so a float grown for a burst would
 * keep what the burst needed, and other processes (and media tasks) find a small wallet short. Trimmed: spare room
 * over twice what its calls in flight hold (or one call's worth when none is) and over a quarter of what the wallet
 * has beyond those calls (the share growth keeps to), back to the larger of the two. What the wallet has is read
 * by the commit before (`walletReads`), so the trim comes one commit later. The float shrinks now and the database
 * follows in this commit (should it fail, the hold stays larger than the float, and its void returns it whole). A
 * lean wallet's float keeps no spare room: all of it goes back at once, in a commit growing it too (so work this
 * out before growsFor, which counts what is free).
 */
export function trims(
  floats: Map<string, Float>,
  growing: Set<string>,
  isLean: IsLean,
): Pick<FloatBatch, "trims" | "walletReads"> {
  const out: Pick<FloatBatch, "trims" | "walletReads"> = { trims: [], walletReads: new Set() };
  for (const float of floats.values()) {
    if (float.closed) continue;
    // Lean: even when its own calls wait for growth (which then asks the wallet for all they need), or a float asked
    // while they do would answer keeping its spare room, and the process that asked refuse what it could cover.
    if (isLean(float.accountId)) {
      if (float.free > 0) out.trims.push(float.shrink(float.free));
      continue;
    }
    if (growing.has(float.accountId)) continue;
    const keep = Math.max(float.reserved, float.lastReservation);
    if (float.free <= 2 * keep) continue;
    out.walletReads.add(float.accountId);
    if (float.walletAvailable === null) continue;
    const share = Math.floor((float.walletAvailable + float.free) / HEADROOM_SHARE);
    const amount = float.free - Math.max(keep, share);
    if (amount > 0) out.trims.push(float.shrink(amount));
  }
  return out;
}

/**
 * Floats a commit reported failed may have left holding more than their size (a growth that went through
 * unreported, a trim that did not), set back to their size in this commit: once every charge of theirs not yet
 * written is in it, their hold after it should be exactly their size now.
 */
export function holdResets(floats: Map<string, Float>, ends: ReservationEnd[]): FloatTrim[] {
  const candidates = new Map<Float, number>();
  for (const float of floats.values()) if (float.holdMayExceedSize && !float.closed) candidates.set(float, 0);
  if (candidates.size === 0) return []; // the usual case: no commit has failed, and the ends need not be counted
  for (const { hold } of ends) {
    const inBatch = candidates.get(hold.float);
    if (inBatch !== undefined) candidates.set(hold.float, inBatch + 1);
  }
  const out: FloatTrim[] = [];
  for (const [float, inBatch] of candidates) if (float.unwritten === inBatch) out.push({ float, amount: float.size });
  return out;
}
