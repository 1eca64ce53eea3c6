import { protocols } from "../llm/protocols/index";
import { openAiErrorBody } from "../llm/protocols/common";
import type { ApiError } from "./errors";

// Which error shape a caller gets is decided by the path it called, from this table — never by `if`s in handlers.
//   /v1/messages*   → Anthropic Messages shape (the SDKs and Claude Code parse it); also /messages* and
//                     /v1/v1/messages*, an Anthropic client under a wrong base URL (its 404 names the fix)
//   /api/v1/jobs/*  → the task API envelope {code, msg, data}, HTTP status equal to code
//   /dashboard*     → an HTML page (the dashboard's own, set by it with setPageErrors): a browser shows it
//   everything else → {error: {message, type, code, param}, request_id}

export type Surface = "anthropic" | "envelope" | "openai" | "page";

const table: Array<[prefix: string, surface: Surface]> = [
  ["/v1/messages", "anthropic"],
  ["/messages", "anthropic"],
  ["/v1/v1/messages", "anthropic"],
  ["/api/v1/jobs/", "envelope"],
  ["/dashboard", "page"],
];

/**
 * How the "page" surface renders an error (the dashboard's error page): set by the dashboard when it is built, so
 * that an error thrown before its handlers run (a body over MAX_REQUEST_BODY_MB, one too slow, a NUL character) is
 * a page too. Until set, such errors get the JSON shape.
 */
export let pageErrors: ((e: Pick<ApiError, "status" | "message">) => Response) | null = null;
export function setPageErrors(render: (e: Pick<ApiError, "status" | "message">) => Response): void {
  pageErrors = render;
}

export function surfaceFor(path: string): Surface {
  for (const [prefix, surface] of table) if (path.startsWith(prefix)) return surface;
  return "openai";
}

export function errorBody(
  surface: Surface,
  e: Pick<ApiError, "status" | "code" | "type" | "message" | "param">,
  requestId: string,
): object {
  const info = { status: e.status, type: e.type, code: e.code, message: e.message, param: e.param, requestId };
  switch (surface) {
    case "anthropic":
      return protocols.anthropic.errorBody(info);
    case "envelope":
      return { code: e.status, msg: e.message, data: null, error_code: e.code, request_id: requestId };
    case "openai":
    case "page": // JSON only until the dashboard has set its page renderer
      return openAiErrorBody(info);
  }
}
