// The OpenAI Responses codec: the client side serves /v1/responses callers (Codex CLI, the openai SDK) from a model
// of another protocol; the upstream side calls a model whose native protocol is Responses. The parts live in
// ./responses/ (client-request, client-tools, client-answer, client-stream, upstream, upstream-stream; shape holds
// the shared objects). Dialect keys the upstream side reads are listed at the top of ./responses/upstream.ts.

import type { ClientCodec, UpstreamCodec } from "./ir";
import { encodeAnswer } from "./responses/client-answer";
import { decodeRequest } from "./responses/client-request";
import { streamEncoder } from "./responses/client-stream";
import { decodeAnswer, encodeRequest } from "./responses/upstream";
import { streamDecoder } from "./responses/upstream-stream";

export const responsesCodec: { client: ClientCodec; upstream: UpstreamCodec } = {
  client: { decodeRequest, encodeAnswer, streamEncoder },
  upstream: { encodeRequest, decodeAnswer, streamDecoder },
};
