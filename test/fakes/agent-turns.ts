// The answers of the scripted agent model (agent-script.ts), one writer per upstream protocol: the turn's tool call
// or text, after its reasoning when the step asks for it, as JSON or as the protocol's stream, always stating
// SCRIPT_USAGE.

import type { FakeProtocol } from "./llm-answers";

/** What every scripted answer states: uncached input and output tokens (no cache, no reasoning). */
export const SCRIPT_USAGE = { input: 100, output: 10 } as const;

export type Protocol = Exclude<FakeProtocol, "embeddings">;
type Call = { id: string; name: string; args: string } | undefined;
export type Turn = {
  model: string;
  text: string;
  call: Call;
  reasoning?: { text: string; opaque: string; signatureOnly: boolean };
  n: number;
};
type SseEvent = [string | null, unknown];

const sse = (events: SseEvent[]) =>
  events
    .map(
      ([name, data]) =>
        `${name ? `event: ${name}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    )
    .join("");

export const WRITERS: Record<Protocol, (turn: Turn, stream: boolean, includeUsage: boolean) => string> = {
  anthropic: (turn, stream) => anthropicAnswer(turn, stream),
  chat: chatAnswer,
  responses: (turn, stream) => responsesAnswer(turn, stream),
};

function anthropicAnswer({ model, text, call, reasoning: r, n }: Turn, stream: boolean): string {
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
  return sse([
    [
      "message_start",
      {
        type: "message_start",
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      },
    ],
    ...anthropicBlockEvents({ text, call, reasoning: r }),
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
}

/** The streamed content blocks: the thinking block first when there is one, then the tool call or the text. */
function anthropicBlockEvents({ text, call, reasoning: r }: Pick<Turn, "text" | "call" | "reasoning">): SseEvent[] {
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
  return blocks.flatMap(([start, deltas], index): [string, unknown][] => [
    ["content_block_start", { type: "content_block_start", index, content_block: start }],
    ...deltas.map((delta): [string, unknown] => ["content_block_delta", { type: "content_block_delta", index, delta }]),
    ["content_block_stop", { type: "content_block_stop", index }],
  ]);
}

function chatAnswer({ model, text, call, reasoning, n }: Turn, stream: boolean, includeUsage: boolean): string {
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
}

type ResponsesItem = { id: string } & Record<string, unknown>;

function responsesAnswer(turn: Turn, stream: boolean): string {
  const { text, call, reasoning: r, n } = turn;
  const usage = {
    input_tokens: SCRIPT_USAGE.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: SCRIPT_USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: SCRIPT_USAGE.input + SCRIPT_USAGE.output,
  };
  const item: ResponsesItem = call
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
  if (!stream) return JSON.stringify(responseOf(turn, "completed", output, usage));
  const at = thought ? 1 : 0; // the output index of the call or message
  let seq = 0;
  const ev: EventOf = (type, data) => [type, { type, ...data, sequence_number: seq++ }];
  const added = call
    ? { ...item, status: "in_progress", arguments: "" }
    : { ...item, status: "in_progress", content: [] };
  return sse([
    ev("response.created", { response: responseOf(turn, "in_progress", [], null) }),
    ...(thought ? summaryEvents(ev, thought) : []),
    ev("response.output_item.added", { output_index: at, item: added }),
    ...(call ? callEvents(ev, item.id, at, call.args) : textEvents(ev, item.id, at, text)),
    ev("response.output_item.done", { output_index: at, item }),
    ev("response.completed", { response: responseOf(turn, "completed", output, usage) }),
  ]);
}

/** A Responses stream event, numbered in the stream's order. */
type EventOf = (type: string, data: Record<string, unknown>) => [string, unknown];

const responseOf = ({ model, n }: Turn, status: string, output: unknown[], usage: unknown) => ({
  id: `resp_script${n}`,
  object: "response",
  created_at: 1767225700,
  status,
  model,
  output,
  usage,
  error: null,
  incomplete_details: null,
});

/** The reasoning item at output 0: its one summary part, streamed in a single delta. */
function summaryEvents(ev: EventOf, thought: ResponsesItem & { summary: { type: string; text: string }[] }) {
  const text = thought.summary[0]!.text;
  const at = { item_id: thought.id, output_index: 0, summary_index: 0 };
  return [
    ev("response.output_item.added", { output_index: 0, item: { ...thought, summary: [] } }),
    ev("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } }),
    ev("response.reasoning_summary_text.delta", { ...at, delta: text }),
    ev("response.reasoning_summary_text.done", { ...at, text }),
    ev("response.reasoning_summary_part.done", { ...at, part: thought.summary[0] }),
    ev("response.output_item.done", { output_index: 0, item: thought }),
  ];
}

const callEvents = (ev: EventOf, itemId: string, at: number, args: string) => [
  ev("response.function_call_arguments.delta", { item_id: itemId, output_index: at, delta: args }),
  ev("response.function_call_arguments.done", { item_id: itemId, output_index: at, arguments: args }),
];

function textEvents(ev: EventOf, itemId: string, at: number, text: string) {
  const part = { item_id: itemId, output_index: at, content_index: 0 };
  return [
    ev("response.content_part.added", { ...part, part: { type: "output_text", text: "", annotations: [] } }),
    ev("response.output_text.delta", { ...part, delta: text }),
    ev("response.output_text.done", { ...part, text }),
    ev("response.content_part.done", { ...part, part: { type: "output_text", text, annotations: [] } }),
  ];
}
