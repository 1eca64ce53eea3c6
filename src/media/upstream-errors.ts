// What a media upstream's failure may tell whom. An upstream's own message can carry the operator's key, organisation
// or account ids (an "invalid key sk-…" refusal, a quota error naming the org), so a customer never sees it: the task
// says which upstream failed and the class of its status, in a stable sentence. The operator's log keeps the message
// with anything shaped like a credential masked.

/** Credential shapes, the most specific first; each match keeps a short prefix so the operator can tell keys apart. */
const SECRET_PATTERNS: RegExp[] = [
  // Authorization values (fal sends `Key <id>:<secret>`); a digit is required so "key provided:" stays text.
  /\b(Bearer|Basic|Key|Token)\s+(?=[A-Za-z0-9._~+/:=-]*\d)[A-Za-z0-9._~+/:=-]{8,}/gi,
  // Named credentials: query parameters (`key=`, `X-Goog-Signature=`), JSON fields (`"api_key":"…"`), header lines
  // (`x-api-key: …`); the name may carry a prefix (`x-`, `client_`).
  /((?:^|[?&;,\s"'{])(?:[a-z0-9]+[-_])*(?:api[_-]?key|key|token|access[_-]?token|secret|signature|sig|password|credential)["']?\s*[:=]\s*["']?)[^&\s"'<>,;}]+/gi,
  /\b(?:sk|rk|pk)-[A-Za-z0-9_-]{16,}/g, // OpenAI (sk-, sk-proj-), Anthropic (sk-ant-…) and similar keys
  /\br8_[A-Za-z0-9]{20,}/g, // Replicate API tokens
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google API keys (Gemini)
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9a-f]{16,}\b/gi, // fal keys: <uuid>:<secret>
  /\b(?:org|proj|acct|user)[-_][A-Za-z0-9]{12,}/g, // organisation, project and account ids
  /\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}/g, // any other long key-like run (kie's hex keys)
];

/** The text with every credential-shaped part replaced by `***` (a short prefix kept). */
export function maskSecrets(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (match: string, lead?: string) => {
      // Patterns with a captured lead (the scheme, the `key=`) keep it; the others keep their first 4 characters.
      if (typeof lead === "string" && match.startsWith(lead))
        return /[=:"'\s]$/.test(lead) ? `${lead}***` : `${lead} ***`;
      return `${match.slice(0, 4)}***`;
    });
  }
  return out;
}

/** "HTTP 4xx" for a status code, a plain word for the gateway's own kinds, "generation error" for the rest. */
export function statusClass(code: string): string {
  if (/^[1-5]\d\d$/.test(code)) return `HTTP ${code[0]}xx`;
  if (code === "network") return "network error";
  if (code === "not_configured") return "not configured";
  return "generation error";
}

/** The customer's message for a task an upstream failed. */
export function upstreamFailedMessage(provider: string, code: string): string {
  return `The upstream (${provider}) failed the task (${statusClass(code)}); nothing was charged.`;
}

/** The customer's message for a task every route refused. */
export function everyRouteRefusedMessage(refusals: Array<{ provider: string; code: string }>): string {
  return `Every upstream refused the task (${refusals.map((r) => `${r.provider}: ${statusClass(r.code)}`).join("; ")}); nothing was charged.`;
}
