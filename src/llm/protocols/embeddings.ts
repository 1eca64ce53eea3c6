// OpenAI Embeddings (POST /v1/embeddings). No stream, no output tokens: the charge is prompt_tokens × input.

import { fromEmbeddingsUsage } from "../usage";
import { openAiErrorBody, passthroughBody } from "./common";
import type { LlmProtocol, StreamTap } from "./types";

// Embeddings never stream; a tap exists only so the table is uniform. It watches nothing and never completes,
// so a proxy that wrongly streamed an embedding would release the hold rather than guess a charge.
const idleTap = (): StreamTap => ({
  feed: () => null,
  flush: () => null,
  sawEnd: () => false,
  end: () => ({ usage: null, failed: false, completed: false, outputCharsSoFar: 0 }),
});

export const embeddings: LlmProtocol = {
  name: "embeddings",
  usageBearingPaths: ["/v1/embeddings"],
  unmeteredPaths: [],
  requestIdHeader: "x-request-id",
  isStream: () => false,
  // Zero, not undefined: "absent" would make the caller hold the model's maximum output.
  maxOutputTokens: () => 0,
  statedInputTokens: tokenIdsOf,
  prepareUpstreamBody: passthroughBody,
  usageFromBody: (json) => fromEmbeddingsUsage(json?.usage),
  outputCharsOfBody: () => 0,
  createStreamTap: idleTap,
  errorBody: openAiErrorBody,
};

/** `input` given as token ids (an array of numbers, or an array of such arrays): how many. */
function tokenIdsOf(body: any): number {
  const input = body?.input;
  if (!Array.isArray(input)) return 0;
  let n = 0;
  for (const item of input) {
    if (typeof item === "number") n++;
    else if (Array.isArray(item)) n += item.length;
  }
  return n;
}
