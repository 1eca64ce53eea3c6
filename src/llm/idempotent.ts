import type { AuthContext } from "../accounts/service";
import type { AppContext } from "../context";
import { bodyBytes } from "../http/body-limits";
import { idempotencyKeyOf, idempotent, type Answer, type Idempotency } from "../http/idempotency";

// An LLM call sent with an Idempotency-Key (http/idempotency.ts says the rules). Its body is read here, once, to
// fingerprint it, and handed on as it came. A JSON answer is stored when it has been read to its end (a copy of
// it is teed off as the client receives it); a stream is not stored; a client that left frees the key.

const utf8 = new TextDecoder();

export async function idempotentLlm(
  ctx: AppContext,
  idem: Idempotency,
  request: Request,
  auth: AuthContext,
  headers: Record<string, string>,
  run: (request: Request) => Promise<Response>,
): Promise<Response> {
  idempotencyKeyOf(request.headers); // a malformed key is refused before the body is read
  const bytes = await bodyBytes(request, ctx.config.body);
  const again = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: bytes,
    signal: request.signal,
  });
  let ran = false;
  const answer = await idempotent(
    idem,
    request,
    auth.accountId,
    () => utf8.decode(bytes),
    () => {
      ran = true;
      return run(again);
    },
    storedAnswer,
    (e) => ctx.log.error("idempotent answer not stored", { error: (e as Error)?.message ?? String(e) }),
  );
  // An answer that ran carries the request's headers already; a replay gets them here.
  if (!ran) for (const [name, value] of Object.entries(headers)) answer.headers.set(name, value);
  return answer;
}

function storedAnswer(res: Response): Answer | Promise<Answer | null> | null {
  if (res.status === 499 || res.body === null) return null; // the client left: nothing it could be given again
  const contentType = res.headers.get("content-type");
  if (contentType?.includes("text/event-stream")) return { status: res.status, contentType, body: null };
  return res
    .clone()
    .text()
    .then((body) => ({ status: res.status, contentType, body }));
}
