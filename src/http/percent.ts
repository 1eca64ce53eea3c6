// Percent-decoding of text a client sent (a wildcard path parameter, a cookie value): a malformed escape (`%ZZ`)
// cannot name anything we have, so it is "nothing" (a 404, no cookie) rather than a URIError and a 500.
export function percentDecoded(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}
