// Placeholder until the anthropic codec lands (its helper's branch replaces this file).
import { TranslationError, type ClientCodec, type UpstreamCodec } from "./ir.ts";

const none = (): never => {
  throw new TranslationError("This protocol cannot be translated yet.");
};
export const anthropicCodec: { client: ClientCodec; upstream: UpstreamCodec } = {
  client: { decodeRequest: none, encodeAnswer: none, streamEncoder: none },
  upstream: { encodeRequest: none, decodeAnswer: none, streamDecoder: none },
};
