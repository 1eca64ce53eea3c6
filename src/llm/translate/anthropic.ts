// The Anthropic Messages codec (see ir.ts): the client side serves Claude Code and Anthropic SDK clients calling
// a model that is not Claude; the upstream side serves OpenAI-protocol clients calling Claude. Its parts live in
// ./anthropic/: client-request.ts, client-answer.ts (JSON and stream), upstream-request.ts, upstream-answer.ts.
//
// Dialect keys read (TranslateTarget.dialect, from the provider table), upstream side only:
//   defaultMaxTokens   number   4096   max_tokens when the request names none (Anthropic requires it)
//   sampling           boolean  true   false: temperature and top_p are not sent (models that refuse them)
//   reasoning          boolean  true   false: no thinking is asked (a model without extended thinking)
//   structuredOutputs  boolean  true   false: strict tools go without `strict`, and a response format is refused

import type { ClientCodec, UpstreamCodec } from "./ir";
import { encodeAnswer, streamEncoder } from "./anthropic/client-answer";
import { decodeRequest } from "./anthropic/client-request";
import { decodeAnswer, streamDecoder } from "./anthropic/upstream-answer";
import { encodeRequest } from "./anthropic/upstream-request";

const client: ClientCodec = { decodeRequest, encodeAnswer, streamEncoder };
const upstream: UpstreamCodec = { encodeRequest, decodeAnswer, streamDecoder };

export const anthropicCodec = { client, upstream };

// For the native /v1/messages path: thinking blocks this codec wrote must not reach Anthropic (see the file).
export { dropForeignThinking, FOREIGN_THINKING_MARKS } from "./anthropic/native-history";
