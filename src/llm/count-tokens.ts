// POST /v1/messages/count_tokens for a model whose provider does not speak Anthropic's protocol (every model but
// Claude, whose count is passed through to Anthropic and exact). No other provider counts tokens for an Anthropic
// request, and Claude Code calls this often, so the answer is the gateway's own estimate: the input estimate a call
// with the same body would be held for (meter.ts planHold: ceil(bytes / 3) plus the allowance for each image), an
// over-count by design. Free, nothing goes upstream.

import type { LlmModel } from "../catalog/model";
import type { LlmProtocol } from "./protocols/index";
import { NO_PAID_TOOLS } from "./protocols/paid-tools";
import { planHold } from "./meter";

export function countTokensEstimate(
  proto: LlmProtocol,
  body: Record<string, any>,
  bytes: Uint8Array,
  model: LlmModel,
  baseHeaders: Record<string, string>,
): Response {
  const { inputEstimate } = planHold(proto, body, bytes.byteLength, model, NO_PAID_TOOLS);
  return new Response(JSON.stringify({ input_tokens: inputEstimate }), {
    status: 200,
    headers: { ...baseHeaders, "content-type": "application/json" },
  });
}
