import type { Catalog } from "../catalog/service";
import { cardPath } from "./model-card-facts";
import { allListings, TYPE_LABEL, TYPE_ORDER } from "./pricing-data";

// /llms.txt (llmstxt.org): a short Markdown index an agent reads first. It points to the machine-readable
// documents and lists every model card, grouped by type, with absolute links (agents often fetch it out of context).

export function renderLlmsTxt(catalog: Catalog, baseUrl: string): string {
  const listings = allListings(catalog);
  const lines = [
    "# Switchyard",
    "",
    "> One API key and one prepaid credit wallet (1 credit = 0.001 USD) in front of many models: LLMs on their native",
    "> wire protocols (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions), embeddings, and image, video and",
    "> audio models through one asynchronous task API.",
    "",
    "Send the key as `Authorization: Bearer <key>` or `x-api-key: <key>`. Call `POST /v1/credits/estimate` before paid",
    "media tasks; `max_credits` in a request body rejects it before any work if the estimate is higher.",
    "",
    "## Docs",
    "",
    `- [Authentication](${baseUrl}/auth.md): how to get and send an API key`,
    `- [OpenAPI description](${baseUrl}/openapi.json): every endpoint and schema`,
    `- [Pricing](${baseUrl}/pricing): every model with its price in USD and credits`,
    `- [Model list](${baseUrl}/v1/models): JSON; \`GET /v1/models/{id}\` adds a model's input JSON Schema and example requests`,
  ];
  for (const type of TYPE_ORDER) {
    const of = listings.filter((l) => l.type === type);
    if (!of.length) continue;
    lines.push("", `## ${TYPE_LABEL[type]} models`, "");
    for (const l of of) {
      const also =
        l.endpoints.length > 1
          ? ` (also ${l.endpoints
              .slice(1)
              .map((e) => `\`${e}\``)
              .join(", ")}, translated)`
          : "";
      lines.push(`- [${l.name}](${baseUrl}${cardPath(l.id)}): \`${l.id}\` on \`${l.endpoint}\`${also}`);
    }
  }
  return lines.join("\n") + "\n";
}
