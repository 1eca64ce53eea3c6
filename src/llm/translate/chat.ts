// The OpenAI Chat Completions codec: a chat client calling a model of another protocol (client side), and an
// Anthropic or Responses client calling a chat-native model such as Gemini, DeepSeek or GPT on chat (upstream
// side). The pieces live in chat/: client.ts (request in, JSON answer out), client-stream.ts (answer stream out),
// upstream.ts (request out, JSON answer in), upstream-stream.ts (answer stream in), shared.ts. The dialect keys
// the upstream side reads (TranslateTarget.dialect): docs/translation.md, "Chat Completions, upstream side".

import type { ClientCodec, UpstreamCodec } from "./ir";
import { decodeRequest, encodeAnswer } from "./chat/client";
import { streamEncoder } from "./chat/client-stream";
import { decodeAnswer, encodeRequest } from "./chat/upstream";
import { streamDecoder } from "./chat/upstream-stream";

export const chatCodec: { client: ClientCodec; upstream: UpstreamCodec } = {
  client: { decodeRequest, encodeAnswer, streamEncoder },
  upstream: { encodeRequest, decodeAnswer, streamDecoder },
};
