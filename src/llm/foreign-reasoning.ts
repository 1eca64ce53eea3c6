// A conversation can move between models: Claude Code switched from a GPT model (served translated) to Claude
// (native), say. Its history then holds reasoning the gateway handed out sealed with its origin (translate/ir.ts
// sealOpaque): a GPT reasoning item inside a thinking block's `signature`. Passed through as it came, the provider
// would refuse the whole request (an invalid signature). So before a native call goes upstream, a sealed value of
// another provider is dropped with its block or item, and one of this provider's own is unsealed. Checked on the
// parsed body with a walk over its turns (no byte scan); a body with none goes through untouched.

import { openOpaque } from "./translate/ir.ts";

const SEALED = "sy1.";

type Fix = (body: Record<string, any>, provider: string) => Record<string, any> | null;

/** Anthropic: thinking blocks (`signature`) and redacted_thinking blocks (`data`) of assistant turns. */
const anthropic: Fix = (body, provider) => {
  const messages = body.messages;
  if (!Array.isArray(messages) || !anyOf(messages, sealedTurn)) return null;
  return { ...body, messages: messages.map((m) => (sealedTurn(m) ? { ...m, content: m.content.flatMap((b: any) => ownBlock(b, provider)) } : m)) };
};

// Plain loops: this runs on every native Anthropic call, and a coding agent's history holds hundreds of turns.
function sealedTurn(m: any): boolean {
  const blocks = m?.role === "assistant" ? m.content : undefined;
  if (!Array.isArray(blocks)) return false;
  for (let i = 0; i < blocks.length; i++) if (sealedValue(blocks[i]) !== undefined) return true;
  return false;
}
function anyOf(list: any[], test: (x: any) => boolean): boolean {
  for (let i = 0; i < list.length; i++) if (test(list[i])) return true;
  return false;
}
/** A block's sealed value, if it has one. */
function sealedValue(b: any): string | undefined {
  const v = b?.type === "thinking" ? b.signature : b?.type === "redacted_thinking" ? b.data : undefined;
  return typeof v === "string" && v.startsWith(SEALED) ? v : undefined;
}
function ownBlock(b: any, provider: string): any[] {
  const sealed = sealedValue(b);
  if (sealed === undefined) return [b];
  const opened = openOpaque(sealed);
  if (opened?.origin !== provider) return [];
  return [b.type === "thinking" ? { ...b, signature: opened.value } : { ...b, data: opened.value }];
}

/** Responses: reasoning input items (`encrypted_content`). */
const responses: Fix = (body, provider) => {
  const input = body.input;
  const sealedItem = (i: any) => i?.type === "reasoning" && typeof i.encrypted_content === "string" && i.encrypted_content.startsWith(SEALED);
  if (!Array.isArray(input) || !anyOf(input, sealedItem)) return null;
  const out = input.flatMap((i: any) => {
    if (!sealedItem(i)) return [i];
    const opened = openOpaque(i.encrypted_content);
    return opened?.origin === provider ? [{ ...i, encrypted_content: opened.value }] : [];
  });
  return { ...body, input: out };
};

const FIXES: Record<string, Fix> = { anthropic, responses };

/** The body without other providers' sealed reasoning, or null when it holds none (the common case). */
export function withoutForeignReasoning(protocol: string, body: Record<string, any>, provider: string): Record<string, any> | null {
  return FIXES[protocol]?.(body, provider) ?? null;
}
