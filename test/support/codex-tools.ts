// The tools a Codex CLI turn declares (a plain function, a namespace of functions, a freeform custom tool), shared
// by the Responses client-side codec tests of both directions.

export const shellTool = {
  type: "function",
  name: "shell",
  description: "Runs a shell command",
  strict: false,
  parameters: {
    type: "object",
    properties: { command: { type: "array", items: { type: "string" } } },
    required: ["command"],
  },
};
export const agents = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Tools for sub-agents.",
  tools: [
    {
      type: "function",
      name: "spawn_agent",
      description: "Spawn a sub-agent.",
      strict: false,
      parameters: { type: "object", properties: { message: { type: "string" } } },
    },
  ],
};
export const applyPatch = {
  type: "custom",
  name: "apply_patch",
  description: "Use apply_patch to edit files.",
  format: { type: "grammar", syntax: "lark", definition: "start: begin_patch hunk+ end_patch" },
};
