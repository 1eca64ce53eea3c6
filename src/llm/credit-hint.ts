import { ApiError } from "../http/errors";
import { InsufficientCredits } from "../ledger/service";
import { microsToCredits } from "../ledger/units";
import { INPUT_BYTES_PER_TOKEN, type HoldPlan } from "./meter";
import { chatMaxTokensField } from "./providers";
import type { ProtocolName } from "./protocols/types";

// A 402 insufficient_credits on an LLM call says what to lower and by how much: most holds are mostly output (the
// model's maximum when the request sets none: a newcomer's first call to a 128k-output model without max_tokens is
// refused on a small wallet), so the hint is the largest output limit the wallet covers for this request.

/**
 * The field that sets the output limit, as the caller's protocol spells it; for chat's two names, the one the caller
 * sent, else the one the model's provider takes (OpenAI refuses max_tokens on its reasoning models).
 */
const OUTPUT_FIELD: Partial<Record<ProtocolName, (body: any, provider: string) => string>> = {
  anthropic: () => "max_tokens",
  chat: (body, provider) =>
    body?.max_completion_tokens !== undefined
      ? "max_completion_tokens"
      : body?.max_tokens !== undefined
        ? "max_tokens"
        : chatMaxTokensField(provider),
  responses: () => "max_output_tokens",
};

export function withCreditHint(
  e: unknown,
  protocol: ProtocolName,
  provider: string,
  body: any,
  plan: HoldPlan,
  requested: number | undefined,
): unknown {
  const field = OUTPUT_FIELD[protocol]?.(body, provider);
  if (!(e instanceof InsufficientCredits) || !field || plan.outputPrice <= 0 || plan.outputTokens <= 0) return e;
  // Setting the field adds its own bytes to the body, which the hold counts as input: room for them is kept.
  const fieldInput = Math.ceil((field.length + 24) / INPUT_BYTES_PER_TOKEN) * plan.inputPrice;
  const withoutOutput = plan.amount - plan.outputTokens * plan.outputPrice + fieldInput;
  const fits = Math.floor((e.available - withoutOutput) / (plan.outputPrice * plan.choices));
  const hint =
    fits >= 1
      ? `${requested === undefined ? `Set ${field}` : `Lower ${field} from ${requested}`} to at most ${fits}${requested === undefined ? ` (without it, the hold covers the model's maximum output, ${plan.outputTokens / plan.choices} tokens)` : ""}, or top up.`
      : `The input alone needs about ${microsToCredits(withoutOutput)} credits: shorten it, or top up.`;
  return new ApiError(e.status, e.code, `${e.message} ${hint}`, { type: e.type, param: fits >= 1 ? field : undefined });
}
