// Typed reads of JSON answers. `Response.json()` is `unknown` under Bun's types: a test names the shape it expects,
// and its assertions check that shape. Answers published in /openapi.json have TypeBox schemas in src (admin API:
// src/accounts/model.ts; /v1/models: src/catalog/schemas.ts; /v1/usage: src/llm/usage-api.ts); `AnswerOf` reads
// one as its type (their objects are open: a test that reads a field beyond the schema adds it).
import type { Static, TSchema } from "elysia";

/** An error as the gateway writes it: OpenAI's shape, or Anthropic's (`type: "error"`), both with `error.code`. */
export interface GatewayError {
  type?: "error";
  error: { type: string; code: string; message: string; param?: string | null };
  request_id: string;
}

/** An error in the media envelope (`/api/v1/...`). */
export interface EnvelopeError {
  code: number;
  msg: string;
  data: null;
  error_code: string;
  request_id: string;
}

/** A list answer. */
export interface ListOf<T> {
  object?: string;
  data: T[];
}

export type AnswerOf<Schema extends TSchema> = Static<Schema>;

/** The answer's body, read as the shape the test expects. */
export async function jsonOf<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** The answer's body as the gateway's error. */
export const errorOf = (res: Response): Promise<GatewayError> => jsonOf<GatewayError>(res);
