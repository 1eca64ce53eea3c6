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

const anthropicTypes: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  422: "invalid_request_error",
  429: "rate_limit_error",
  500: "api_error",
  502: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
  529: "overloaded_error",
};

export function errorBody(surface: Surface, e: Pick<ApiError, "status" | "code" | "type" | "message" | "param">, requestId: string): object {
  switch (surface) {
    case "anthropic":
      return { type: "error", error: { type: anthropicTypes[e.status] ?? (e.status >= 500 ? "api_error" : "invalid_request_error"), message: e.message, code: e.code }, request_id: requestId };
    case "envelope":
      return { code: e.status, msg: e.message, data: null, error_code: e.code, request_id: requestId };
    case "openai":
      return { error: { message: e.message, type: e.type, code: e.code, param: e.param ?? null }, request_id: requestId };
  }
}
