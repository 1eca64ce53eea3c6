// A scripted coding-agent model: the fake upstream answers an agent's turn with the next step of a script, written
// in the upstream's own protocol (Anthropic Messages, Chat Completions or Responses), JSON or streamed. The step is
// chosen from the conversation itself, not from a queue, because agents interleave side calls (titles, summaries)
// with their main loop: step k answers a conversation that already holds k tool results. A request that does not
// offer the step's tool (a side call) is answered with a short text instead.
//
// Every answer states the same usage, SCRIPT_USAGE, so a test can compute each call's charge from the catalog.

import type { FakeProtocol } from "./llm-answers";

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

/** What every scripted answer states: uncached input and output tokens (no cache, no reasoning). */
export const SCRIPT_USAGE = { input: 100, output: 10 } as const;

/** The text a side call (one that does not offer the step's tool) gets. */
export const SIDE_TEXT = "Scripted side answer.";

type Protocol = Exclude<FakeProtocol, "embeddings">;

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

type Call = { id: string; name: string; args: string } | undefined;
type Turn = {
  model: string;
  text: string;
  call: Call;
  reasoning?: { text: string; opaque: string; signatureOnly: boolean };
  n: number;
};
const sse = (events: [string | null, unknown][]) =>
  events
    .map(
      ([name, data]) =>
        `${name ? `event: ${name}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    )
    .join("");

const WRITERS: Record<Protocol, (turn: Turn, stream: boolean, includeUsage: boolean) => string> = {
  anthropic({ model, text, call, reasoning: r, n }, stream) {
    const usage = {
      input_tokens: SCRIPT_USAGE.input,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: SCRIPT_USAGE.output,
    };
    const stop_reason = call ? "tool_use" : "end_turn";
    const block = call
      ? { type: "tool_use", id: call.id, name: call.name, input: JSON.parse(call.args) }
      : { type: "text", text };
    const content = r ? [{ type: "thinking", thinking: r.text, signature: r.opaque }, block] : [block];
    const message = {
      id: `msg_script${n}`,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason,
      stop_sequence: null,
      usage,
    };
    if (!stream) return JSON.stringify(message);
    const start = call ? { type: "tool_use", id: call.id, name: call.name, input: {} } : { type: "text", text: "" };
    const delta = call ? { type: "input_json_delta", partial_json: call.args } : { type: "text_delta", text };
    const blocks: [unknown, unknown[]][] = [[start, [delta]]];
    if (r)
      blocks.unshift([
        { type: "thinking", thinking: "", signature: "" },
        [
          { type: "thinking_delta", thinking: r.text },
          { type: "signature_delta", signature: r.opaque },
        ],
      ]);
    return sse([
      [
        "message_start",
        {
          type: "message_start",
          message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
        },
      ],
      ...blocks.flatMap(([start, deltas], index): [string, unknown][] => [
        ["content_block_start", { type: "content_block_start", index, content_block: start }],
        ...deltas.map((delta): [string, unknown] => [
          "content_block_delta",
          { type: "content_block_delta", index, delta },
        ]),
        ["content_block_stop", { type: "content_block_stop", index }],
      ]),
      [
        "message_delta",
        {
          type: "message_delta",
          delta: { stop_reason, stop_sequence: null },
          usage: { output_tokens: SCRIPT_USAGE.output },
        },
      ],
      ["message_stop", { type: "message_stop" }],
    ]);
  },

  chat({ model, text, call, reasoning, n }, stream, includeUsage) {
    const sig =
      reasoning?.signatureOnly && call ? { extra_content: { google: { thought_signature: reasoning.opaque } } } : {};
    const r = reasoning?.signatureOnly ? undefined : reasoning;
    const usage = {
      prompt_tokens: SCRIPT_USAGE.input,
      completion_tokens: SCRIPT_USAGE.output,
      total_tokens: SCRIPT_USAGE.input + SCRIPT_USAGE.output,
      prompt_tokens_details: { cached_tokens: 0 },
    };
    const finish_reason = call ? "tool_calls" : "stop";
    const base = { id: `chatcmpl-script${n}`, created: 1767225700, model };
    const toolCall = call && {
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.args },
      ...sig,
    };
    if (!stream) {
      const message = {
        role: "assistant",
        content: call ? null : text,
        ...(r && { reasoning_content: r.text }),
        ...(call ? { tool_calls: [toolCall] } : {}),
      };
      return JSON.stringify({
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason }],
        usage,
      });
    }
    const chunk = (delta: unknown, finish: string | null) =>
      [null, { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }] as [
        null,
        unknown,
      ];
    const events: [string | null, unknown][] = call
      ? [
          chunk(
            {
              role: "assistant",
              content: null,
              tool_calls: [{ index: 0, ...toolCall, function: { name: call.name, arguments: "" } }],
            },
            null,
          ),
          chunk({ tool_calls: [{ index: 0, function: { arguments: call.args } }] }, null),
        ]
      : [chunk({ role: "assistant", content: "" }, null), chunk({ content: text }, null)];
    if (r) events.unshift(chunk({ role: "assistant", content: null, reasoning_content: r.text }, null));
    events.push(chunk({}, finish_reason));
    if (includeUsage) events.push([null, { ...base, object: "chat.completion.chunk", choices: [], usage }]);
    events.push([null, "[DONE]"]);
    return sse(events);
  },

  responses({ model, text, call, reasoning: r, n }, stream) {
    const usage = {
      input_tokens: SCRIPT_USAGE.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: SCRIPT_USAGE.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: SCRIPT_USAGE.input + SCRIPT_USAGE.output,
    };
    const item = call
      ? {
          id: `fc_script${n}`,
          type: "function_call",
          status: "completed",
          arguments: call.args,
          call_id: call.id,
          name: call.name,
        }
      : {
          id: `msg_script${n}`,
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text, annotations: [] }],
        };
    const summary = r ? [{ type: "summary_text", text: r.text }] : [];
    const thought = r && { id: `rs_script${n}`, type: "reasoning", encrypted_content: r.opaque, summary };
    const output = thought ? [thought, item] : [item];
    const at = thought ? 1 : 0; // the output index of the call or message
    const response = (status: string, output: unknown[], u: unknown) => ({
      id: `resp_script${n}`,
      object: "response",
      created_at: 1767225700,
      status,
      model,
      output,
      usage: u,
      error: null,
      incomplete_details: null,
    });
    if (!stream) return JSON.stringify(response("completed", output, usage));
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>): [string, unknown] => [
      type,
      { type, ...data, sequence_number: seq++ },
    ];
    const added = call
      ? { ...item, status: "in_progress", arguments: "" }
      : { ...item, status: "in_progress", content: [] };
    const created = ev("response.created", { response: response("in_progress", [], null) });
    const thinking: [string, unknown][] = thought
      ? [
          ev("response.output_item.added", { output_index: 0, item: { ...thought, summary: [] } }),
          ev("response.reasoning_summary_part.added", {
            item_id: thought.id,
            output_index: 0,
            summary_index: 0,
            part: { type: "summary_text", text: "" },
          }),
          ev("response.reasoning_summary_text.delta", {
            item_id: thought.id,
            output_index: 0,
            summary_index: 0,
            delta: r!.text,
          }),
          ev("response.reasoning_summary_text.done", {
            item_id: thought.id,
            output_index: 0,
            summary_index: 0,
            text: r!.text,
          }),
          ev("response.reasoning_summary_part.done", {
            item_id: thought.id,
            output_index: 0,
            summary_index: 0,
            part: summary[0],
          }),
          ev("response.output_item.done", { output_index: 0, item: thought }),
        ]
      : [];
    const opened = ev("response.output_item.added", { output_index: at, item: added });
    const middle: [string, unknown][] = call
      ? [
          ev("response.function_call_arguments.delta", { item_id: item.id, output_index: at, delta: call.args }),
          ev("response.function_call_arguments.done", { item_id: item.id, output_index: at, arguments: call.args }),
        ]
      : [
          ev("response.content_part.added", {
            item_id: item.id,
            output_index: at,
            content_index: 0,
            part: { type: "output_text", text: "", annotations: [] },
          }),
          ev("response.output_text.delta", { item_id: item.id, output_index: at, content_index: 0, delta: text }),
          ev("response.output_text.done", { item_id: item.id, output_index: at, content_index: 0, text }),
          ev("response.content_part.done", {
            item_id: item.id,
            output_index: at,
            content_index: 0,
            part: { type: "output_text", text, annotations: [] },
          }),
        ];
    return sse([
      created,
      ...thinking,
      opened,
      ...middle,
      ev("response.output_item.done", { output_index: at, item }),
      ev("response.completed", { response: response("completed", output, usage) }),
    ]);
  },
};
