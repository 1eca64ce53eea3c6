// Raw HTTP against a fake upstream, for tests of the fakes themselves: a JSON POST, and an answer's body read as
// the chunks it arrived in (their boundaries are what some tests check).

/** POSTs `body` as JSON to `url`; `init` may add or replace headers, a signal, the method. */
export const postJson = (url: string, body: unknown, init: RequestInit = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...init,
  });

export async function chunks(res: Response): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of res.body as any as AsyncIterable<Uint8Array>) out.push(c);
  return out;
}
export const joined = (parts: Uint8Array[]) => Buffer.concat(parts);
