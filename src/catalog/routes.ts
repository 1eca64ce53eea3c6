import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { notFound } from "../http/errors";

// Public (no key): prices are public anyway, and agents discover models before they hold a key.
export function catalogRoutes(ctx: AppContext) {
  const list = { object: "list", data: ctx.catalog.publicList() }; // built once: the catalog is immutable at runtime
  return new Elysia({ name: "catalog", detail: { tags: ["Models"] } })
    .get("/v1/models", () => list, { detail: { summary: "Every model with its endpoint, capabilities and USD pricing" } })
    .get("/v1/models/*", ({ params }) => {
      const id = decodeURIComponent(params["*"]);
      const m = ctx.catalog.publicModel(id);
      if (!m) throw notFound(`Model ${id}`);
      return m;
    }, { detail: { summary: "One model (ids may contain slashes, e.g. google/nano-banana)" } });
}
