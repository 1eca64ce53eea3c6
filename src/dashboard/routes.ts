import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { keysRoutes } from "./keys";
import { loginRoutes } from "./login";
import { tasksRoutes } from "./tasks";
import { usageRoutes } from "./usage";
import { Users } from "./users";
import { walletRoutes } from "./wallet";
import { webhooksRoutes } from "./webhooks";

// The dashboard under /dashboard: server-rendered pages with the shared layout, signed in with email + password.
// Every page is hidden from /openapi.json: they are HTML for people with a session cookie, not an API.

export function dashboardRoutes(ctx: AppContext) {
  const users = new Users(ctx.db);
  return new Elysia({ name: "dashboard" })
    .use(loginRoutes(ctx, users))
    .use(walletRoutes(ctx, users))
    .use(usageRoutes(ctx, users))
    .use(tasksRoutes(ctx, users))
    .use(keysRoutes(ctx, users))
    .use(webhooksRoutes(ctx, users));
}
