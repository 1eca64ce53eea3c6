// The protocol table the proxy looks things up in, by name or by client-facing path.

import { anthropic } from "./anthropic";
import { chat } from "./chat";
import { embeddings } from "./embeddings";
import { responses } from "./responses";
import type { LlmProtocol, ProtocolName } from "./types";

export type * from "./types";
export { anthropic, chat, embeddings, responses };
export { anthropicErrorType } from "./anthropic";
export { isUsageOnlyEvent } from "./chat";

export const protocols: Record<ProtocolName, LlmProtocol> = { anthropic, chat, responses, embeddings };

const byPath = new Map<string, LlmProtocol>();
for (const p of Object.values(protocols))
  for (const path of [...p.usageBearingPaths, ...p.unmeteredPaths]) byPath.set(path, p);

/** The protocol serving a client-facing path (query string excluded), or undefined. */
export function protocolForPath(pathname: string): LlmProtocol | undefined {
  return byPath.get(pathname);
}
