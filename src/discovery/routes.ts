import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { htmlResponse } from "../pages/layout";
import { API_CATALOG_PATH, apiCatalog, apiCatalogLinkHeader, LINKSET_CONTENT_TYPE } from "./api-catalog";
import { renderAuthMd } from "./auth-md";
import { renderDocsPage } from "./docs-page";
import { firstCalls } from "./first-calls";
import { bodyType, buildOpenApiDocument } from "./openapi";

// Machine-readable entrypoints, public (no key): /openapi.json, /.well-known/api-catalog, /auth.md, /docs.
// The OpenAPI document and the docs page are built on first request, from every route of the composed app, and
// rebuilt only if the route table changes.

const cacheControl = "public, max-age=300";

export function discoveryRoutes(ctx: AppContext) {
  const base = ctx.config.publicBaseUrl;
  const authMd = renderAuthMd(base);
  const catalogBody = JSON.stringify(apiCatalog(base), null, 2);
  const catalogHeaders = {
    "content-type": LINKSET_CONTENT_TYPE,
    link: apiCatalogLinkHeader(base),
    "cache-control": cacheControl,
  };
  let cached: { routes: number; json: string; docs: string } | undefined;

  const self = new Elysia({ name: "discovery", detail: { tags: ["Discovery"] } });
  // getGlobalRoutes() on this plugin sees every route of the app it is mounted in, including later ones (it is
  // what @elysiajs/openapi itself reads; protected in the typings only).
  const current = () => {
    const routes = (self as any).getGlobalRoutes().length as number;
    if (!cached || cached.routes !== routes) {
      const doc = buildOpenApiDocument(self, base, ctx.catalog);
      cached = { routes, json: JSON.stringify(doc), docs: renderDocsPage(doc, firstCalls(ctx.catalog, base)) };
    }
    return cached;
  };

  return self
    .get(
      "/openapi.json",
      () =>
        new Response(current().json, {
          headers: { "content-type": "application/json", "cache-control": cacheControl },
        }),
      {
        detail: { hide: true }, // the document does not describe itself; the api-catalog links it as service-desc
      },
    )
    .get("/docs", () => htmlResponse(current().docs, { headers: { "cache-control": cacheControl } }), {
      response: t.String(),
      detail: { summary: "API reference for people (HTML, works offline)", ...bodyType("text/html") },
    })
    .get(
      "/auth.md",
      () =>
        new Response(authMd, {
          headers: { "content-type": "text/markdown; charset=utf-8", "cache-control": cacheControl },
        }),
      {
        response: t.String(),
        detail: {
          summary: "How to authenticate (both key headers, where keys come from) and verify webhook signatures",
          ...bodyType("text/markdown"),
        },
      },
    )
    .get(API_CATALOG_PATH, () => new Response(catalogBody, { headers: catalogHeaders }), {
      response: t.Object({ linkset: t.Array(t.Record(t.String(), t.Any())) }, { examples: [apiCatalog(base)] }),
      detail: { summary: "API catalog (RFC 9727 linkset)", ...bodyType("application/linkset+json") },
    })
    .head(API_CATALOG_PATH, () => new Response(null, { headers: catalogHeaders }), {
      detail: { summary: 'API catalog headers: Link rel="api-catalog"' },
    });
}
