// /.well-known/api-catalog (RFC 9727): a linkset (RFC 9264, application/linkset+json) that anchors the API at the
// public base URL and links it to its description (service-desc), documentation (service-doc), status and metadata
// (service-meta, RFC 8631). HEAD answers with a Link header of rel "api-catalog" pointing at the catalog itself.

export const API_CATALOG_PATH = "/.well-known/api-catalog";
export const LINKSET_CONTENT_TYPE = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';

export function apiCatalog(baseUrl: string) {
  const at = (path: string) => baseUrl + path;
  return {
    linkset: [
      {
        anchor: at("/"),
        "service-desc": [
          {
            href: at("/openapi.json"),
            type: "application/vnd.oai.openapi+json;version=3.1",
            title: "OpenAPI 3.1 description",
          },
        ],
        "service-doc": [
          { href: at("/docs"), type: "text/html", title: "API reference" },
          { href: at("/auth.md"), type: "text/markdown", title: "Authentication and webhook signatures" },
          { href: at("/llms.txt"), type: "text/markdown", title: "Index for language models (llms.txt)" },
        ],
        status: [{ href: at("/readyz"), type: "application/json", title: "Readiness (database and Redis)" }],
        "service-meta": [
          { href: at("/pricing"), type: "text/html", title: "Models and prices" },
          { href: at("/v1/models"), type: "application/json", title: "Models, endpoints and prices (JSON)" },
        ],
      },
    ],
  };
}

export function apiCatalogLinkHeader(baseUrl: string): string {
  return `<${baseUrl}${API_CATALOG_PATH}>; rel="api-catalog"`;
}
