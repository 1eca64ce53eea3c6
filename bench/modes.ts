// What the bench sends: chat completions to gpt-5.2 as a short request answered whole (json) or streamed (stream), a
// coding agent's ~180 KB streamed turn (agent), and, on the gateway alone, the stream's request as Anthropic
// Messages on the same chat-completions model (translated), which the gateway translates both ways.

import { agentBody } from "./agent-body";
import type { Request } from "./wrk";

export const MODES = ["json", "stream", "agent", "translated"] as const;
export type Mode = (typeof MODES)[number];
/** The modes every target serves; only the gateway translates. */
export const PROXY_MODES: readonly Mode[] = ["json", "stream", "agent"];

const short = (stream: boolean) =>
  JSON.stringify({
    model: "gpt-5.2",
    max_completion_tokens: 256,
    ...(stream && { stream: true }),
    messages: [{ role: "user", content: "Say hello." }],
  });
const translated = JSON.stringify({
  model: "gpt-5.2",
  max_tokens: 256,
  stream: true,
  messages: [{ role: "user", content: "Say hello." }],
});
const BODIES: Record<Mode, string> = { json: short(false), stream: short(true), agent: agentBody(), translated };
export const bodyOf = (mode: Mode) => BODIES[mode];

/** The mode whose direct call a row's added latency is measured against: a translated stream makes the stream's. */
export const baseMode = (mode: string) => (mode === "translated" ? "stream" : mode);

export interface Target {
  name: string;
  req(mode: Mode): Request;
  pid: number | null;
  modes: readonly Mode[];
}
