// For the native /v1/messages path, not the codec: a Claude Code conversation that ran some turns on another model
// through this gateway holds thinking blocks this codec wrote (signatures sealed with "sy1.", or "" when unsigned).
// Anthropic refuses signatures it did not make, so a turn on a Claude model must go without them. The passthrough
// forwards bytes untouched, so it calls this only when its body holds the mark (a cheap byte search).

import { openOpaque } from "../ir";

/** What to look for in the raw body before parsing it: every block this removes contains one of these. */
export const FOREIGN_THINKING_MARKS = [
  '"sy1.',
  '"signature":""',
  '"signature": ""',
  '"data":""',
  '"data": ""',
] as const;

const isForeign = (b: any): boolean =>
  (b?.type === "thinking" &&
    (typeof b.signature !== "string" || b.signature === "" || openOpaque(b.signature) !== null)) ||
  (b?.type === "redacted_thinking" && (typeof b.data !== "string" || b.data === "" || openOpaque(b.data) !== null));

/**
 * Removes from a Messages request body, in place, the thinking blocks Anthropic did not sign; an assistant message
 * left empty by that is removed too. Returns whether anything changed (the body must then be re-serialised).
 */
export function dropForeignThinking(body: Record<string, any>): boolean {
  if (!Array.isArray(body?.messages)) return false;
  let changed = false;
  const kept = [];
  for (const m of body.messages) {
    if (m?.role === "assistant" && Array.isArray(m.content) && m.content.some(isForeign)) {
      changed = true;
      m.content = m.content.filter((b: unknown) => !isForeign(b));
      if (!m.content.length) continue;
    }
    kept.push(m);
  }
  if (changed) body.messages = kept;
  return changed;
}
