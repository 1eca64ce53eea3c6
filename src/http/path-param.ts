// A wildcard path parameter, percent-decoded (model ids contain slashes: /v1/models/google/nano-banana). A malformed
// escape (`%ZZ`) cannot name anything we have, so it is treated as an unknown id (404), not a URIError (500).
export function decodedPathParam(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}
