// Errors are thrown as ApiError anywhere below a route and shaped once, by the surface the caller speaks
// (see surfaces.ts). `code` is our stable machine-readable code; `type` is the OpenAI-style category.

export class ApiError extends Error {
  readonly type: string;
  readonly headers?: Record<string, string>;
  readonly param?: string;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    opts: { type?: string; headers?: Record<string, string>; param?: string } = {},
  ) {
    super(message);
    this.type = opts.type ?? defaultType(status);
    this.headers = opts.headers;
    this.param = opts.param;
  }
}

/**
 * 400 for text holding U+0000: Postgres cannot store it in a text column, and a name, email, id or filter holding one
 * failed there with a 500 (refused in the URL by base.ts, in form and JSON bodies by body-limits.ts).
 */
export function nulRefused(): ApiError {
  return new ApiError(
    400,
    "invalid_request",
    "The request contains a NUL character (U+0000), which the gateway does not accept.",
  );
}

function defaultType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 402) return "insufficient_quota";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "gateway_error";
  return "invalid_request_error";
}

export const unauthorized = (message: string) => new ApiError(401, "invalid_api_key", message);
export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found.`);
export const badRequest = (code: string, message: string, param?: string) =>
  new ApiError(400, code, message, { param });
export const unprocessable = (message: string, param?: string) =>
  new ApiError(422, "invalid_request", message, { param });
