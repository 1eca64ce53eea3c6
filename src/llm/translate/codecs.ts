// The codecs by the client-facing path of their protocol: a translated call takes its client side from the path
// the client called and its upstream side from the path the provider speaks (providers.ts spokenPath).

import { anthropicCodec } from "./anthropic.ts";
import { chatCodec } from "./chat.ts";
import { responsesCodec } from "./responses.ts";
import type { ClientCodec, UpstreamCodec } from "./ir.ts";

export interface Codec {
  client: ClientCodec;
  upstream: UpstreamCodec;
}

export const codecs: Record<string, Codec> = {
  "/v1/messages": anthropicCodec,
  "/v1/responses": responsesCodec,
  "/v1/chat/completions": chatCodec,
};
