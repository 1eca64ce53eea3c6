// The codecs by the client-facing path of their protocol: a translated call takes its client side from the path
// the client called and its upstream side from the path the provider speaks (providers.ts spokenPath).

import { anthropicCodec } from "./anthropic";
import { chatCodec } from "./chat";
import { responsesCodec } from "./responses";
import type { ClientCodec, UpstreamCodec } from "./ir";

export interface Codec {
  client: ClientCodec;
  upstream: UpstreamCodec;
}

export const codecs: Record<string, Codec> = {
  "/v1/messages": anthropicCodec,
  "/v1/responses": responsesCodec,
  "/v1/chat/completions": chatCodec,
};
