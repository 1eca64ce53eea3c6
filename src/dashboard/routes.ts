import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { setPageErrors } from "../http/surfaces";
import { errorPage } from "./guard";
import { keyEditRoutes } from "./key-edit";
import { keysRoutes } from "./keys";
import { loginRoutes } from "./login";
import { tasksRoutes } from "./tasks";
import { usageRoutes } from "./usage";
import { Users } from "./users";
import { walletRoutes } from "./wallet";
import { webhooksRoutes } from "./webhooks";

// The dashboard under /dashboard: server-rendered pages with the shared layout, signed in with email + password.
// Every page is hidden from /openapi.json: they are HTML for people with a session cookie, not an API.

/** The page's title for an error thrown before a dashboard handler could answer (its message says the rest). */
const TITLES: Record<number, string> = {
  400: "Bad request",
  403: "Forbidden",
  404: "Not found",
  408: "Too slow",
  413: "Too large",
  422: "Not accepted",
  429: "Too many requests",
};

export function dashboardRoutes(ctx: AppContext) {
  const users = new Users(ctx.db);
  setPageErrors((e) =>
    errorPage(e.status, TITLES[e.status] ?? (e.status >= 500 ? "Something went wrong" : "Not accepted"), e.message),
  );
  return new Elysia({ name: "dashboard" })
    .use(loginRoutes(ctx, users))
    .use(walletRoutes(ctx, users))
    .use(usageRoutes(ctx, users))
    .use(tasksRoutes(ctx, users))
    .use(keysRoutes(ctx, users))
    .use(keyEditRoutes(ctx, users))
    .use(webhooksRoutes(ctx, users));
}
