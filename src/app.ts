import { Elysia, t } from "elysia";
import { adminRoutes } from "./accounts/admin-routes";
import { catalogRoutes } from "./catalog/routes";
import type { AppContext } from "./context";
import { dashboardAdminRoutes } from "./dashboard/admin-routes";
import { dashboardRoutes } from "./dashboard/routes";
import { discoveryRoutes } from "./discovery/routes";
import { basePlugin, setRouteMethods } from "./http/base";
import { creditRoutes } from "./ledger/routes";
import { keyRoutes } from "./accounts/key-routes";
import { mediaRoutes } from "./media/routes";
import { opsRoutes } from "./ops/routes";
import { llmRoutes } from "./llm/routes";
import { publicPageRoutes } from "./pages/public-routes";

/** Composes the feature plugins. Nothing else lives here. */
export function buildApp(ctx: AppContext) {
  const llm = llmRoutes(ctx);
  // Bun's router takes the LLM calls first (http/bun-routes.ts); everything else goes to Elysia.
  const app = new Elysia({ serve: { routes: llm.bunRoutes } })
    .use(basePlugin(ctx.log))
    .use(opsRoutes(ctx))
    .get("/healthz", () => ({ status: "ok" as const }), {
      response: t.Object({ status: t.Literal("ok") }),
      detail: { tags: ["Operations"], summary: "The process is up" },
    })
    .use(catalogRoutes(ctx))
    .use(creditRoutes(ctx))
    .use(keyRoutes(ctx))
    .use(mediaRoutes(ctx))
    .use(publicPageRoutes(ctx))
    .use(adminRoutes(ctx))
    .use(dashboardAdminRoutes(ctx))
    .use(dashboardRoutes(ctx))
    .use(discoveryRoutes(ctx))
    .use(llm.routes);
  setRouteMethods(app.routes);
  return app;
}

export type App = ReturnType<typeof buildApp>;
