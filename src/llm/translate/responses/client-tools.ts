// The tools of a Responses request → IR tools: function tools as they are, custom (freeform) tools as functions of
// one string argument, namespace tools as their members under joined names; hosted tools are left out and named.

import type { IrTool, IrToolChoice } from "../ir";
import { CUSTOM_INPUT, NAMESPACE_JOIN, refuse, requiredString } from "./shape";

/**
 * Function and custom tools carried, namespaces as their members. A hosted tool (web_search, local_shell…) runs on
 * OpenAI's side and the translated model has no equivalent: it is left out and named in `droppedTools` (the answer's
 * x-switchyard-dropped-tools header), since Codex offers web_search in every request; a tool_choice forcing one is a 400.
 */
export function decodeTools(
  raw: unknown,
  choice: any,
): { tools: IrTool[]; toolChoice?: IrToolChoice; droppedTools: string[] } {
  if (raw != null && !Array.isArray(raw)) refuse("tools must be an array", "tools");
  let tools: IrTool[] = [];
  const droppedTools: string[] = [];
  ((raw as any[]) ?? []).forEach((t, i) => {
    if (t?.type === "function") tools.push(functionTool(t, `tools[${i}]`));
    else if (t?.type === "custom") tools.push(customTool(t, `tools[${i}]`));
    else if (t?.type === "namespace") tools.push(...namespaceMembers(t, i, droppedTools));
    else droppedTools.push(hostedToolType(t?.type, `tools[${i}].type`));
  });
  const chosen = (toolChoice: IrToolChoice | undefined) => ({ tools, droppedTools, ...(toolChoice && { toolChoice }) });
  if (!tools.length && (choice == null || choice === "auto" || choice === "none")) return chosen(undefined);
  if (choice == null || choice === "auto") return chosen(choice ? { type: "auto" } : undefined);
  if (choice === "none") return chosen({ type: "none" });
  if (choice === "required") {
    if (!tools.length)
      refuse("tool_choice required forces a tool, and this model can run none of the tools offered", "tool_choice");
    return chosen({ type: "required" });
  }
  if ((choice?.type === "function" || choice?.type === "custom") && typeof choice.name === "string") {
    const name =
      typeof choice.namespace === "string" && choice.namespace
        ? choice.namespace + NAMESPACE_JOIN + choice.name
        : choice.name;
    if (!tools.some((t) => t.name === name))
      refuse(`tool_choice names ${JSON.stringify(choice.name)}, which is not among the tools`, "tool_choice");
    return chosen({ type: "tool", name });
  }
  if (choice?.type === "allowed_tools" && Array.isArray(choice.tools)) {
    const allowed = new Set(choice.tools.map((t: any) => t?.name).filter((n: unknown) => typeof n === "string"));
    tools = tools.filter((t) => allowed.has(t.name));
    return chosen({ type: choice.mode === "required" ? "required" : "auto" });
  }
  return refuse(
    `tool_choice ${JSON.stringify(choice?.type ?? choice)} forces a tool this model cannot run (hosted tools run on OpenAI's side; this model has no equivalent)`,
    "tool_choice",
  );
}

function functionTool(t: Record<string, any>, at: string): IrTool {
  return {
    name: requiredString(t.name, `${at}.name`),
    ...(typeof t.description === "string" && { description: t.description }),
    parameters:
      typeof t.parameters === "object" && t.parameters !== null ? t.parameters : { type: "object", properties: {} },
    ...(typeof t.strict === "boolean" && { strict: t.strict }),
  };
}

/** A namespace's function and custom tools under joined names, the namespace's description before each one's own. */
function namespaceMembers(t: Record<string, any>, i: number, droppedTools: string[]): IrTool[] {
  const namespace = requiredString(t.name, `tools[${i}].name`);
  if (!Array.isArray(t.tools)) return refuse(`tools[${i}].tools must be an array`, `tools[${i}].tools`);
  const members: IrTool[] = [];
  t.tools.forEach((member: any, j: number) => {
    const at = `tools[${i}].tools[${j}]`;
    if (member?.type !== "function" && member?.type !== "custom")
      return void droppedTools.push(hostedToolType(member?.type, `${at}.type`));
    const tool = member.type === "function" ? functionTool(member, at) : customTool(member, at);
    const context = typeof t.description === "string" && t.description ? `${t.description}\n\n` : "";
    members.push({
      ...tool,
      name: namespace + NAMESPACE_JOIN + tool.name,
      ...((context || tool.description) && { description: `${context}${tool.description ?? ""}`.trim() }),
    });
  });
  return members;
}

/** A hosted tool's type, as it is named in the dropped-tools header; a tool without a type is the caller's mistake. */
function hostedToolType(type: unknown, at: string): string {
  if (typeof type !== "string" || !/^[a-z0-9_.-]{1,64}$/.test(type))
    return refuse("each tool needs a type (function, custom, namespace or a hosted tool's type)", at);
  return type;
}

function customTool(t: Record<string, any>, at: string): IrTool {
  const grammar =
    t.format?.type === "grammar" && typeof t.format.definition === "string"
      ? `\n\nThe input must follow this ${t.format.syntax ?? ""} grammar:\n${t.format.definition}`
      : "";
  return {
    name: requiredString(t.name, `${at}.name`),
    description: `${typeof t.description === "string" ? t.description : ""}${grammar}`.trim(),
    parameters: {
      type: "object",
      properties: { [CUSTOM_INPUT]: { type: "string", description: "the tool's freeform input" } },
      required: [CUSTOM_INPUT],
      additionalProperties: false,
    },
  };
}
