import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { notFound } from "../http/errors";
import { percentDecoded } from "../http/percent";
import { cardsFor } from "../pages/model-card-facts";
import { errorCodes } from "../discovery/openapi";
import { pathName } from "../discovery/openapi-shape";
import { ModelCard, ModelList, type PublicModel } from "./schemas";

// Public (no key): prices are public anyway, and agents discover models before they hold a key.
export function catalogRoutes(ctx: AppContext) {
  // Built once, and again when a model reaches its last day of service (Catalog.retireExpired).
  const list = ctx.catalog.derived(() => ({
    object: "list" as const,
    data: ctx.catalog.publicList() as Array<typeof PublicModel.static>,
  }));
  // One model = the same facts as its model card (price rows, worked example, example requests, input JSON Schema).
  const cards = ctx.catalog.derived(() => cardsFor(ctx.catalog, ctx.config.publicBaseUrl));
  return new Elysia({ name: "catalog", detail: { tags: ["Models"] } })
    .get("/v1/models", () => list(), {
      response: ModelList,
      detail: { summary: "Every model with its endpoint, capabilities and USD pricing" },
    })
    .get(
      "/v1/models/*",
      ({ params }) => {
        const id = percentDecoded(params["*"]);
        const card = id === null ? undefined : cards().get(id);
        if (!card) throw notFound(`Model ${id ?? params["*"]}`);
        return card.json as typeof ModelCard.static;
      },
      {
        response: ModelCard,
        detail: {
          summary: "One model with its price rows, examples and (media) input JSON Schema; ids may contain slashes",
          ...errorCodes({ 404: ["not_found"] }),
          ...pathName("model_id", "A model id from GET /v1/models; may contain `/` (google/nano-banana)."),
        },
      },
    );
}
