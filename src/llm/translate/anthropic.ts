// The Anthropic Messages codec (see ir.ts): the client side serves Claude Code and Anthropic SDK clients calling
// a model that is not Claude; the upstream side serves OpenAI-protocol clients calling Claude. Its parts live in
// ./anthropic/: client-request.ts, client-answer.ts (JSON and stream), upstream-request.ts, upstream-answer.ts.
// The dialect keys the upstream side reads: docs/translation.md, "Anthropic Messages, upstream side".

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
