import { protocols } from "../llm/protocols/index";
import { openAiErrorBody } from "../llm/protocols/common";
import type { ApiError } from "./errors";

// Which error shape a caller gets is decided by the path it called, from this table — never by `if`s in handlers.
//   /v1/messages*   → Anthropic Messages shape (the SDKs and Claude Code parse it)
//   /api/v1/jobs/*  → the task API envelope {code, msg, data}, HTTP status equal to code
//   everything else → {error: {message, type, code, param}, request_id}

export type Surface = "anthropic" | "envelope" | "openai";

const table: Array<[prefix: string, surface: Surface]> = [
  ["/v1/messages", "anthropic"],
  ["/api/v1/jobs/", "envelope"],
];

export function surfaceFor(path: string): Surface {
  for (const [prefix, surface] of table) if (path.startsWith(prefix)) return surface;
  return "openai";
}

export function errorBody(surface: Surface, e: Pick<ApiError, "status" | "code" | "type" | "message" | "param">, requestId: string): object {
  const info = { status: e.status, type: e.type, code: e.code, message: e.message, param: e.param, requestId };
  switch (surface) {
    case "anthropic":
      return protocols.anthropic.errorBody(info);
    case "envelope":
      return { code: e.status, msg: e.message, data: null, error_code: e.code, request_id: requestId };
    case "openai":
      return openAiErrorBody(info);
  }
}
