// A conversation can move between models: Claude Code switched from a GPT model (served translated) to Claude
// (native), say. Its history then holds reasoning the gateway handed out sealed with its provider and model
// (translate/ir.ts originOf), which another provider, or another model, would refuse (an invalid signature). So
// before a native call goes upstream, such reasoning is dropped with its block or item (a Responses item sealed with
// this model's own origin is unsealed). A body whose bytes mention no thinking block (Anthropic) or no seal
// (Responses) is not walked, so its history is never parsed; a body with none goes through untouched.

import { openOpaque, originOf, providerOf } from "./translate/ir";
import { dropForeignThinking } from "./translate/anthropic";
import { jsonTokens, mentions } from "./request-fields";

const SEALED = "sy1.";
const THINKING = jsonTokens('"thinking"', '"redacted_thinking"');
const SEAL = jsonTokens(`"${SEALED}`);

type Fix = (body: Record<string, any>, provider: string, upstreamModel?: string) => Record<string, any> | null;

/**
 * Anthropic: thinking and redacted_thinking blocks Anthropic did not sign (sealed, or with no signature at all, as
 * the Anthropic codec writes another model's reasoning), removed by the codec's own dropForeignThinking.
 */
const anthropic: Fix = (body) => {
  if (!mentions(body, "messages", THINKING)) return null;
  const messages = body.messages;
  if (!Array.isArray(messages) || !anyOf(messages, unsignedTurn)) return null;
  const copy = { ...body };
  dropForeignThinking(copy);
  return copy;
};

// Plain loops: this runs on every native Anthropic call, and a coding agent's history holds hundreds of turns.
function unsignedTurn(m: any): boolean {
  const blocks = m?.role === "assistant" ? m.content : undefined;
  if (!Array.isArray(blocks)) return false;
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    const v = b?.type === "thinking" ? b.signature : b?.type === "redacted_thinking" ? b.data : "-";
    if (typeof v !== "string" || v === "" || v.startsWith(SEALED)) return true;
  }
  return false;
}
function anyOf(list: any[], test: (x: any) => boolean): boolean {
  for (let i = 0; i < list.length; i++) if (test(list[i])) return true;
  return false;
}

/** Responses: reasoning input items (`encrypted_content`). */
const responses: Fix = (body, provider, upstreamModel) => {
  if (!mentions(body, "input", SEAL)) return null;
  const input = body.input;
  const sealedItem = (i: any) =>
    i?.type === "reasoning" && typeof i.encrypted_content === "string" && i.encrypted_content.startsWith(SEALED);
  if (!Array.isArray(input) || !anyOf(input, sealedItem)) return null;
  // Without the model (a caller that does not say), the provider alone decides, as seals without a model do.
  const own = upstreamModel ? originOf({ provider, model: upstreamModel }) : null;
  const out = input.flatMap((i: any) => {
    if (!sealedItem(i)) return [i];
    const opened = openOpaque(i.encrypted_content);
    const mine = opened !== null && (own !== null ? opened.origin === own : providerOf(opened.origin) === provider);
    return mine ? [{ ...i, encrypted_content: opened.value }] : [];
  });
  return { ...body, input: out };
};

const FIXES: Record<string, Fix> = { anthropic, responses };

/** The body without other providers' or models' sealed reasoning, or null when it holds none (the common case). */
export function withoutForeignReasoning(
  protocol: string,
  body: Record<string, any>,
  provider: string,
  upstreamModel?: string,
): Record<string, any> | null {
  return FIXES[protocol]?.(body, provider, upstreamModel) ?? null;
}
