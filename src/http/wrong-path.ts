// A 404 on a path that looks like a known endpoint under a wrong base URL names the likely fix: clients join their
// base URL and the endpoint, so `/v1` missing (`/chat/completions`), doubled (`/v1/v1/messages`) or a near miss
// (`/v1/chat/completion`) are the usual mistakes. Each rule proposes a path; it is only offered if the gateway serves it.

interface Rule {
  /** The path the caller probably meant, or undefined when the rule does not apply. */
  candidate(path: string): string | undefined;
  advice: string;
}

const rules: Rule[] = [
  {
    candidate: (p) => (p.startsWith("/v1/v1/") ? p.slice(3) : undefined),
    advice: "your base URL ends in /v1 and the client adds /v1 again: drop /v1 from the Anthropic base URL",
  },
  {
    candidate: (p) => (!p.startsWith("/v1/") ? "/v1" + p : undefined),
    advice: "the base URL is missing /v1 (OpenAI clients take the gateway's address with /v1 at the end)",
  },
  {
    candidate: (p) => (p.startsWith("/v1/") && !p.endsWith("s") ? p + "s" : undefined),
    advice: "the endpoint name is misspelt",
  },
];

/** "Did you mean …" for a path that is not served, or undefined. `served(path)` says whether a fixed path exists. */
export function wrongPathHint(method: string, path: string, served: (path: string) => boolean): string | undefined {
  const clean = path.replace(/\/+$/, "") || "/";
  for (const rule of rules) {
    const candidate = rule.candidate(clean);
    if (candidate && served(candidate))
      return `No route ${method} ${path}. Did you mean ${method} ${candidate}? Likely ${rule.advice}.`;
  }
  return undefined;
}
