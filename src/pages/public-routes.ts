import { Elysia } from "elysia";
import { MODEL_TYPES } from "../catalog/model";
import type { AppContext } from "../context";
import { alsoBodyType, bodyType } from "../http/route-docs";
import { mediaSettingsOf } from "../media/settings";
import { pathName } from "../discovery/openapi-shape";
import { percentDecoded } from "../http/percent";
import pkg from "../../package.json";
import { landingJson, renderLanding } from "./landing";
import { htmlResponse } from "./layout";
import { renderLlmsTxt } from "./llms-txt";
import { renderCard, renderNotFound } from "./model-card";
import { cardPath, cardsFor } from "./model-card-facts";
import { etagMatches, PricingPage } from "./pricing";

// Public pages (no key): /pricing, /models/{id}, /llms.txt. All are rendered from the in-memory catalog, so each page
// is built once (again when a model reaches its last day of service) and revalidated by an ETag from catalog.version.

const cacheControl = "public, max-age=300";

// For /openapi.json: what the pages answer besides their 200 (an ETag revalidated, an alias sent on, no such card).
const ifNoneMatch = {
  name: "If-None-Match",
  in: "header" as const,
  required: false,
  description: "The ETag of an earlier answer: 304 with no body while the catalog has not changed.",
  schema: { type: "string" as const },
};
const notModified = {
  description: "Not modified: the ETag given still holds (no body).",
  headers: { etag: { schema: { type: "string" as const } } },
};
const LANDING_JSON = {
  type: "object",
  required: ["name", "version", "description", "base_urls", "links"],
  properties: {
    name: { type: "string" },
    version: { type: "string" },
    description: { type: "string" },
    base_urls: {
      type: "object",
      required: ["anthropic", "openai"],
      properties: { anthropic: { type: "string" }, openai: { type: "string" } },
    },
    links: {
      type: "array",
      items: {
        type: "object",
        required: ["rel", "href", "title"],
        properties: { rel: { type: "string" }, href: { type: "string" }, title: { type: "string" } },
      },
    },
  },
};
const pricingQuery = [
  {
    name: "type",
    in: "query" as const,
    required: false,
    description: "Only models of this type (any other value is ignored).",
    schema: { type: "string" as const, enum: [...MODEL_TYPES] },
  },
  {
    name: "provider",
    in: "query" as const,
    required: false,
    description: "Only this provider's models (an unknown one is ignored).",
    schema: { type: "string" as const },
  },
  {
    name: "q",
    in: "query" as const,
    required: false,
    description:
      "Words every listed model matches (id, name, provider, type, endpoint, description); the first 100 characters count.",
    schema: { type: "string" as const },
  },
];

export function publicPageRoutes(ctx: AppContext) {
  const base = ctx.config.publicBaseUrl;
  const pricing = ctx.catalog.derived(() => new PricingPage(ctx.catalog));
  const llms = ctx.catalog.derived(() => renderLlmsTxt(ctx.catalog, base));
  const landing = landingPage(base);
  const card = ctx.catalog.derived(() => modelCardPages(ctx, base));

  // Listed in /openapi.json like every public route (bodyType: the body is not JSON).
  return (
    new Elysia({ name: "public-pages", detail: { tags: ["Pages"] } })
      .get("/", ({ request }) => landing(request), {
        detail: {
          summary:
            "Start page: links to the docs, pricing, dashboard and machine-readable documents (HTML, or JSON for Accept: application/json)",
          ...bodyType("text/html"),
          ...alsoBodyType("application/json", LANDING_JSON),
        },
      })
      .get("/pricing", ({ query, request }) => pricing().respond(query, request.headers.get("if-none-match")), {
        detail: {
          summary: "Models and prices for people (HTML; filters as query parameters)",
          ...bodyType("text/html"),
          parameters: [...pricingQuery, ifNoneMatch],
          responses: { 200: { description: "The page, with an ETag." }, 304: notModified },
        },
      })
      // Ids contain slashes (google/nano-banana), hence the wildcard.
      .get("/models/*", ({ params, request }) => card()(params["*"], request), {
        detail: {
          summary: "A model's card (HTML); ids may contain slashes, e.g. /models/google/nano-banana",
          ...bodyType("text/html"),
          parameters: [ifNoneMatch],
          responses: {
            200: { description: "The card, with an ETag." },
            301: {
              description: "The id is an alias: the model's own card is at `location` (no body).",
              headers: { location: { schema: { type: "string" } } },
            },
            304: notModified,
            404: {
              description: "No such model: an HTML page saying so.",
              content: { "text/html": { schema: { type: "string" } } },
            },
          },
          ...pathName("model_id", "A model id; may contain `/`."),
        },
      })
      .get(
        "/llms.txt",
        () =>
          new Response(llms(), {
            headers: { "content-type": "text/markdown; charset=utf-8", "cache-control": cacheControl },
          }),
        {
          detail: { summary: "Index of the API for language models (llmstxt.org)", ...bodyType("text/markdown") },
        },
      )
  );
}

/** A browser gets the page; a client asking for JSON (Accept: application/json) the same links as data. */
function landingPage(base: string) {
  const landing = { html: renderLanding(base), json: JSON.stringify(landingJson(base, pkg.version)) };
  return (request: Request) => {
    const wantsJson =
      /application\/json/.test(request.headers.get("accept") ?? "") &&
      !/text\/html/.test(request.headers.get("accept") ?? "");
    const headers = { "cache-control": cacheControl, vary: "accept" };
    return wantsJson
      ? new Response(landing.json, { headers: { ...headers, "content-type": "application/json" } })
      : htmlResponse(landing.html, { headers });
  };
}

/** A model's card by its id as the path has it (percent-encoded); each card rendered on first request. */
function modelCardPages(ctx: AppContext, base: string) {
  const cards = cardsFor(ctx.catalog, base);
  const cardSettings = { resultRetentionDays: mediaSettingsOf(ctx.config).retentionDays };
  const cardHtml = new Map<string, string>();
  return (path: string, request: Request) => {
    const id = percentDecoded(path);
    const facts = id === null ? undefined : cards.get(id);
    if (!facts || id === null) return htmlResponse(renderNotFound(id ?? path), { status: 404 });
    // An alias (claude-haiku-4-5-20251001) has no card of its own: send the reader to the model's.
    if (facts.id !== id) return new Response(null, { status: 301, headers: { location: cardPath(facts.id) } });
    const etag = `"${ctx.catalog.version}-${Bun.hash(facts.id).toString(36)}"`;
    const headers = { etag, "cache-control": cacheControl };
    if (etagMatches(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
    let page = cardHtml.get(facts.id);
    if (!page) cardHtml.set(facts.id, (page = renderCard(facts, base, cardSettings)));
    return htmlResponse(page, { headers });
  };
}
