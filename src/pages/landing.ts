import { html, layout } from "./layout";

// GET /: the first thing a person (or an agent) sees at the gateway's address. Browsers get a short HTML page,
// `Accept: application/json` a small index of the same links. HEAD / stays the connectivity probe (llm/routes.ts).

export interface LandingLink {
  rel: string;
  href: string;
  title: string;
}

export function landingLinks(base: string): LandingLink[] {
  return [
    { rel: "docs", href: `${base}/docs`, title: "API reference" },
    { rel: "pricing", href: `${base}/pricing`, title: "Models and prices" },
    { rel: "dashboard", href: `${base}/dashboard`, title: "Dashboard: wallet, usage, API keys" },
    { rel: "openapi", href: `${base}/openapi.json`, title: "OpenAPI 3.1 description" },
    { rel: "auth", href: `${base}/auth.md`, title: "Authentication and webhook signatures" },
    { rel: "llms", href: `${base}/llms.txt`, title: "Index for language models" },
  ];
}

export function landingJson(base: string, version: string) {
  return {
    name: "Switchyard",
    version,
    description: "One API key and one prepaid credit wallet (1 credit = 0.001 USD) in front of many models.",
    base_urls: { anthropic: base, openai: `${base}/v1` },
    links: landingLinks(base),
  };
}

export function renderLanding(base: string): string {
  const links = landingLinks(base);
  return layout(
    { title: "Welcome" },
    html`<h1>Switchyard</h1>
<p>One API key and one prepaid credit wallet (1 credit = 0.001 USD) in front of many models: LLMs on their native
protocols (Anthropic Messages, OpenAI Responses and Chat Completions), embeddings, and image, video and audio models
through one task API.</p>
<div class="card"><h2>Base URLs</h2>
<p>Anthropic SDKs and Claude Code: <code>${base}</code></p>
<p>OpenAI SDKs: <code>${base}/v1</code></p>
<p class="muted">Send your key as <code>Authorization: Bearer &lt;key&gt;</code> or <code>x-api-key: &lt;key&gt;</code>.</p></div>
<ul class="links">${links.map((l) => html`<li><a href="${l.href.slice(base.length) || "/"}">${l.title}</a></li>`)}</ul>`,
  );
}
