// A scripted coding-agent model: the fake upstream answers an agent's turn with the next step of a script, written
// in the upstream's own protocol (Anthropic Messages, Chat Completions or Responses), JSON or streamed. The step is
// chosen from the conversation itself, not from a queue, because agents interleave side calls (titles, summaries)
// with their main loop: step k answers a conversation that already holds k tool results. A request that does not
// offer the step's tool (a side call) is answered with a short text instead.
//
// Every answer states the same usage, SCRIPT_USAGE, so a test can compute each call's charge from the catalog.

import { WRITERS, type Protocol } from "./agent-turns";

/** One model turn: a tool call or a final text, optionally after reasoning (Anthropic thinking with a signature,
 * a chat `reasoning_content` as DeepSeek sends it, a Responses reasoning item with encrypted_content); "signature":
 * on chat, Gemini 3's way instead: no text, a thought signature on the tool call (extra_content.google). */
export type AgentStep = ({ call: { name: string; input: Record<string, unknown> } } | { text: string }) & {
  reasoning?: boolean | "signature";
  /** the first this-many requests at this step fail (the fake answers its protocol's HTTP 500): an agent retries */
  failFirst?: number;
};

/** The reasoning text of step k, and the opaque value (signature, encrypted_content) its provider attaches. */
export const scriptReasoning = (k: number) => ({
  text: `Step ${k}: thinking about the file.`,
  opaque: `EqScriptOpaque${k}x`,
});

export { SCRIPT_USAGE } from "./agent-turns";

/** The text a side call (one that does not offer the step's tool) gets. */
export const SIDE_TEXT = "Scripted side answer.";

/** Providers whose native calls reach the fake elsewhere than at their catalog endpoint (test/llm/support.ts sets
 * their base URLs): Gemini's OpenAI-compatible path, and DeepSeek, which speaks chat whatever its catalog says. */
const PATH_OF_PROVIDER: Record<string, string> = {
  gemini: "/v1beta/openai/chat/completions",
  deepseek: "/chat/completions",
};
export const upstreamPathOf = (m: { provider: string; endpoint: string }): string =>
  PATH_OF_PROVIDER[m.provider] ?? m.endpoint;

const toolResults: Record<Protocol, (body: any) => number> = {
  anthropic: (b) =>
    (b.messages ?? [])
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((c: any) => c?.type === "tool_result").length,
  chat: (b) => (b.messages ?? []).filter((m: any) => m?.role === "tool").length,
  responses: (b) =>
    (Array.isArray(b.input) ? b.input : []).filter(
      (i: any) => i?.type === "function_call_output" || i?.type === "custom_tool_call_output",
    ).length,
};

const toolNames: Record<Protocol, (body: any) => string[]> = {
  anthropic: (b) => (b.tools ?? []).map((t: any) => t.name),
  chat: (b) => (b.tools ?? []).map((t: any) => t.function?.name),
  responses: (b) => (b.tools ?? []).map((t: any) => t.name),
};

/** The answer body for this request: the script's step for the conversation so far, in `protocol`. */
/** The answer body for this request, or null for a failure the step asks for (`failFirst`). */
export function scriptedBody(protocol: Protocol, body: any, steps: AgentStep[]): string | null {
  const done = toolResults[protocol](body);
  let step = steps[Math.min(done, steps.length - 1)]!;
  if ("call" in step && !toolNames[protocol](body).includes(step.call.name)) step = { text: SIDE_TEXT };
  const failed = failures.get(step) ?? 0;
  if (failed < (step.failFirst ?? 0)) {
    failures.set(step, failed + 1);
    return null;
  }
  const stream = body?.stream === true;
  const model = typeof body?.model === "string" ? body.model : "model";
  const call =
    "call" in step
      ? {
          id: `${protocol === "anthropic" ? "toolu" : "call"}_script_${done}`,
          name: step.call.name,
          args: JSON.stringify(step.call.input),
        }
      : undefined;
  const text = "text" in step ? step.text : "";
  const includeUsage = body?.stream_options?.include_usage === true;
  const reasoning = step.reasoning
    ? { ...scriptReasoning(done), signatureOnly: step.reasoning === "signature" }
    : undefined;
  return WRITERS[protocol]({ model, text, call, reasoning, n: ++answers }, stream, includeUsage);
}

const failures = new WeakMap<AgentStep, number>();

// Every answer's ids are its own, as a real upstream's are: Claude Code merges assistant messages sharing an id.
let answers = 0;
