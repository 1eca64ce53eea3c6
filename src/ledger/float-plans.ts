// What a group commit asks of the floats besides the calls' finishes (llm/ledger-batch.ts): growth for calls the
// float could not cover, top-ups of floats running low, trims of floats holding more than they use, and resyncs of
// floats whose hold may hold more than they know. Worked out in memory from this process's floats, just before each
// commit. A lean wallet (ledger/float-asks.ts: another process found it short) gets no spare room at all: growth
// without headroom, no top-ups, and every commit trims its float back to the calls in flight.

import { newId } from "../db/ids.ts";
import { Float, HEADROOM_SHARE, type FloatBatch, type FloatGrow, type FloatTrim } from "./float.ts";
import type { Finish } from "../llm/records.ts";

type IsLean = (accountId: string) => boolean;

/**
 * One growth request per wallet: what its waiters need beyond the float's free part, and room to spare (none on a
 * lean wallet). `asked`: some of its waiters have asked other processes for their spare room.
 */
export function growsFor(floats: Map<string, Float>, waiters: ReadonlyArray<{ accountId: string; amount: number; asked: number | null }>, isLean: IsLean): FloatGrow[] {
  const byAccount = new Map<string, { amounts: number[]; asked: boolean }>();
  for (const w of waiters) {
    const a = byAccount.get(w.accountId) ?? byAccount.set(w.accountId, { amounts: [], asked: false }).get(w.accountId)!;
    a.amounts.push(w.amount);
    a.asked ||= w.asked !== null;
  }
  return [...byAccount].map(([accountId, { amounts, asked }]) => {
    const float = floats.get(accountId) ?? null;
    const total = amounts.reduce((a, b) => a + b, 0);
    const free = float && !float.closed ? Math.max(0, float.free) : 0;
    const need = total - free; // > 0: commit() served the waiters the float covers
    const headroom = isLean(accountId) ? 0 : Math.max(need, float?.size ?? 0);
    return { accountId, float, need, free, headroom, amounts, newHoldId: newId("hold"), asked };
  });
}

/**
 * Floats running low, topped up in this commit so that the next calls need not wait for one: a float's spare room
 * is used up by its calls' charges, and before, a call found it empty every few hundred calls under load and
 * waited for a commit of its own. Low: less spare room than its calls in flight hold. Topped up by that much again
 * (grow() caps it, as any headroom, at a quarter of what the wallet has beyond it).
 */
export function refills(floats: Map<string, Float>, growing: Set<string>, isLean: IsLean): FloatGrow[] {
  const out: FloatGrow[] = [];
  for (const f of floats.values()) {
    if (f.closed || f.free >= f.reserved || growing.has(f.accountId) || isLean(f.accountId)) continue;
    out.push({ accountId: f.accountId, float: f, need: 0, free: Math.max(0, f.free), headroom: f.reserved, amounts: [], newHoldId: newId("hold") });
  }
  return out;
}

/**
 * Floats holding far more spare room than they use, and more than their share of the wallet, trimmed back. A
 * call's reservation stays in the float when it finishes (only its charge leaves), so a float grown for a burst
 * kept what the burst needed, and on a small wallet other instances (and media tasks) found it short while one
 * call at a time ran here. Trimmed: spare room over twice what its calls in flight hold (or one call's worth when
 * none is) and over a quarter of what the wallet has beyond those calls (the same share growth keeps to), back to
 * the larger of the two. What the wallet has is read by the commit before (`observe`), so the trim comes one
 * commit later. The float shrinks now and the database follows in this commit (should it fail, the hold stays
 * larger than the float, and its release returns it whole). A lean wallet's float keeps no spare room: all of it
 * goes back at once, in a commit growing it too (so work this out before growsFor, which counts what is free).
 */
export function trims(floats: Map<string, Float>, growing: Set<string>, isLean: IsLean): Pick<FloatBatch, "trims" | "observe"> {
  const out: Pick<FloatBatch, "trims" | "observe"> = { trims: [], observe: new Set() };
  for (const f of floats.values()) {
    if (f.closed) continue;
    // Lean: even when its own calls wait for growth (which then asks the wallet for all they need), or a float asked
    // while they do would answer keeping its spare room, and the process that asked refuse what it could cover.
    if (isLean(f.accountId)) {
      if (f.free <= 0) continue;
      out.trims.push({ float: f, amount: f.free });
      f.size = f.reserved;
      continue;
    }
    if (growing.has(f.accountId)) continue;
    const keep = Math.max(f.reserved, f.lastAmount);
    if (f.free <= 2 * keep) continue;
    out.observe.add(f.accountId);
    if (f.walletAvailable === null) continue;
    const share = Math.floor((f.walletAvailable + f.free) / HEADROOM_SHARE);
    const amount = f.free - Math.max(keep, share);
    if (amount <= 0) continue;
    f.size -= amount;
    out.trims.push({ float: f, amount });
  }
  return out;
}

/**
 * Floats a commit reported failed may have left holding more than their size (a growth that went through unseen, a
 * trim that did not), set back to their size in this commit: once every charge of theirs not yet written is in it,
 * their hold after it should be exactly their size now.
 */
export function resyncs(floats: Map<string, Float>, finishes: Finish[]): FloatTrim[] {
  const inBatch = new Map<Float, number>();
  for (const f of finishes) inBatch.set(f.hold.float, (inBatch.get(f.hold.float) ?? 0) + 1);
  const out: FloatTrim[] = [];
  for (const f of floats.values()) if (f.unsure && !f.closed && f.unwritten === (inBatch.get(f) ?? 0)) out.push({ float: f, amount: f.size });
  return out;
}
