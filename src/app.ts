import { Elysia } from "elysia";
import { adminRoutes } from "./accounts/admin-routes";
import { catalogRoutes } from "./catalog/routes";
import type { AppContext } from "./context";
import { basePlugin } from "./http/base";
import { creditRoutes } from "./ledger/routes";
import { llmRoutes } from "./llm/routes";

/** Composes the feature plugins. Nothing else lives here. */
export function buildApp(ctx: AppContext) {
  return new Elysia()
    .use(basePlugin(ctx.log))
    .get("/healthz", () => ({ status: "ok" }), { detail: { tags: ["Operations"], summary: "The process is up" } })
    .use(catalogRoutes(ctx))
    .use(creditRoutes(ctx))
    .use(adminRoutes(ctx))
    .use(llmRoutes(ctx));
}

export type App = ReturnType<typeof buildApp>;
