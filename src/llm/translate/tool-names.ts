// Tool names the upstream would refuse for their length: OpenAI takes at most 64 characters, and MCP tool names
// (mcp__server__tool) or Codex namespace members (namespace__tool) often run longer. Such a name goes up shortened,
// the same way on every turn (the history's calls must name the tool they named before), and comes back restored in
// JSON and streamed answers, so the client only ever sees its own names.

import { TranslationError, type IrAnswer, type IrEvent, type IrRequest } from "./ir";

export const MAX_TOOL_NAME = 64;
const HASH_CHARS = 8;

/** The name as it goes upstream: itself when short enough, else its start, "_" and a hash of the whole name. */
export function shortToolName(name: string): string {
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = new Bun.CryptoHasher("sha256").update(name).digest("hex").slice(0, HASH_CHARS);
  return `${name.slice(0, MAX_TOOL_NAME - HASH_CHARS - 1)}_${hash}`;
}

/** The short name → the client's name, for the answer; null when no name needed shortening (the usual case). */
export type ToolNames = Map<string, string> | null;

/**
 * Shortens the request's long tool names in place (tools, tool choice, the history's calls). Two names that would
 * go up the same (a hash collision, or a tool already named like another's short form) are refused, never merged.
 */
export function shortenToolNames(ir: IrRequest): ToolNames {
  let back: Map<string, string> | null = null;
  const rename = (name: string): string => {
    const short = shortToolName(name);
    if (short === name) return name;
    back ??= new Map();
    const other = back.get(short);
    if (other !== undefined && other !== name)
      throw new TranslationError(
        `tool names ${JSON.stringify(other)} and ${JSON.stringify(name)} are too long and too alike to tell apart upstream`,
        "tools",
      );
    back.set(short, name);
    return short;
  };
  for (const t of ir.tools) t.name = rename(t.name);
  if (ir.toolChoice?.type === "tool") ir.toolChoice = { type: "tool", name: rename(ir.toolChoice.name) };
  for (const m of ir.messages) for (const p of m.parts) if (p.type === "tool_call") p.name = rename(p.name);
  if (back === null) return null;
  const shortened: Map<string, string> = back;
  const seen = new Set<string>();
  for (const t of ir.tools) {
    if (shortened.has(t.name) && seen.has(t.name))
      throw new TranslationError(
        `tool name ${JSON.stringify(t.name)} is also the shortened form of ${JSON.stringify(shortened.get(t.name))}; rename one of them`,
        "tools",
      );
    seen.add(t.name);
  }
  return shortened;
}

/** An answer's tool calls under the client's names. */
export function restoreAnswerToolNames(names: ToolNames, answer: IrAnswer): IrAnswer {
  if (names) for (const p of answer.parts) if (p.type === "tool_call") p.name = names.get(p.name) ?? p.name;
  return answer;
}

/** A stream event with its tool call under the client's name. */
export function restoreEventToolName(names: ToolNames, e: IrEvent): IrEvent {
  if (!names || e.type !== "part_start" || e.part.type !== "tool_call") return e;
  const name = names.get(e.part.name);
  return name === undefined ? e : { ...e, part: { ...e.part, name } };
}
