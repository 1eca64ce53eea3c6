// Raw HTTP against a fake upstream, for tests of the fakes themselves: a JSON POST, and an answer's body read as
// the chunks it arrived in (their boundaries are what some tests check).
import { afterAll, beforeEach } from "bun:test";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";

/** POSTs `body` as JSON to `url`; `init` may add or replace headers, a signal, the method. */
export const postJson = (url: string, body: unknown, init: RequestInit = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...init,
  });

/** A fake LLM upstream for a file's tests (seed 42), reset before each test, stopped after them; `post` POSTs to it. */
export function useFakeLlmUpstream() {
  const fake = startFakeLlmUpstream({ seed: 42 });
  afterAll(() => fake.stop());
  beforeEach(() => fake.reset());
  const post = (path: string, body: unknown, init: RequestInit = {}) => postJson(fake.url + path, body, init);
  return { fake, post };
}

export async function chunks(res: Response): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of res.body as any as AsyncIterable<Uint8Array>) out.push(c);
  return out;
}
export const joined = (parts: Uint8Array[]) => Buffer.concat(parts);
