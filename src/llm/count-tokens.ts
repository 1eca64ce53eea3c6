// POST /v1/messages/count_tokens: free and unmetered. Claude's count is passed through to Anthropic, exact. For a
// model whose provider does not speak Anthropic's protocol (every other model) no provider counts tokens for an
// Anthropic request, and Claude Code calls this often, so the answer is the gateway's own estimate: the input
// estimate a call with the same body would be held for (meter.ts planHold: ceil(bytes / 3) plus the allowance for
// each image), an over-count by design; nothing goes upstream.

import type { LlmModel } from "../catalog/model";
import type { AppContext } from "../context";
import type { LlmProtocol } from "./protocols/index";
import { NO_PAID_TOOLS } from "./protocols/paid-tools";
import type { SplicedBody } from "./protocols/common";
import { planHold } from "./meter";
import type { Provider } from "./providers";
import { callUpstream, queryOf, upstreamHeaders } from "./upstream";
import { answerHeaders, throwIfGatewaySide } from "./call-failures";

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

/** Claude's count, passed through: the upstream's answer as it came, or the gateway's error for its refusals. */
export async function forwardCountTokens(
  ctx: AppContext,
  request: Request,
  url: string,
  provider: Provider,
  body: string | Uint8Array | SplicedBody,
  baseHeaders: Record<string, string>,
) {
  let res: Response;
  try {
    res = await callUpstream(
      provider,
      url + queryOf(request),
      upstreamHeaders(request.headers, provider.name),
      body,
      request.signal,
    );
  } catch (e) {
    if (request.signal.aborted) return new Response(null, { status: 499 }); // the client left: nothing to answer
    throw e;
  }
  throwIfGatewaySide(ctx, provider.name, res, baseHeaders["x-request-id"]!);
  return new Response(res.body, { status: res.status, headers: answerHeaders(res, baseHeaders) });
}
