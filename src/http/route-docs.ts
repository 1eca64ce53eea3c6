// What a route says about itself for /openapi.json, spread into its `detail`: markers that discovery/openapi.ts turns
// into responses and removes. Here, below every feature, so a route declares them without importing the discovery
// module that renders the document.

/** Spread into a route's `detail` when its success body is not JSON: `detail: { summary, ...bodyType("text/html") }`. */
export function bodyType(contentType: string): Record<string, unknown> {
  return { "x-content-type": contentType };
}

/**
 * Spread into a route's `detail`: what its query parameters accept, where the handler checks it itself (to name the
 * parameter in its 422) and the route's schema therefore states less.
 */
export function parameterSchemas(byName: Record<string, object>): Record<string, unknown> {
  return { "x-parameter-schemas": byName };
}

/** Spread into a route's `detail` when its success may also come as `contentType` (or any of several). */
export function alsoBodyType(
  contentType: string | string[],
  schema: object = { type: "string" },
): Record<string, unknown> {
  const types = typeof contentType === "string" ? [contentType] : contentType;
  return { "x-also-content": Object.fromEntries(types.map((type) => [type, { schema }])) };
}

/**
 * Spread into the `detail` of a route that honours an Idempotency-Key (http/idempotency.ts): the header and its
 * refusals are documented with it.
 */
export function takesIdempotencyKey(): Record<string, unknown> {
  return { "x-idempotency-key": true };
}

/** Spread into a route's `detail`: the error codes it can answer, by status (401/429/422 of the guards are added). */
export function errorCodes(byStatus: Record<number, string[]>): Record<string, unknown> {
  return { "x-errors": byStatus };
}
