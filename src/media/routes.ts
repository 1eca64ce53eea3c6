// The media front doors, one small Elysia instance per resource composed here: the public estimate, result files,
// the endpoint upstreams notify, the native task API (task-routes.ts) and the OpenAI-style aliases (alias-routes.ts).
// Task creation and reads end up in TaskService; none of them talks to an upstream.
import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { ApiError, notFound } from "../http/errors";
import { routeGuards } from "../http/guards";
import { alsoBodyType, bodyType, errorCodes } from "../http/route-docs";
import { aliasTaskRoutes } from "./alias-routes";
import { estimate } from "./estimate";
import { EstimateBody, EstimateResponse } from "./schemas";
import { findResultFile, pollSoon } from "./service";
import { mediaSettingsOf } from "./settings";
import { createStorage, SERVABLE_TYPES, type Storage, servableType } from "./storage";
import { nativeTaskRoutes, taskDoors } from "./task-routes";

export function mediaRoutes(ctx: AppContext) {
  const settings = mediaSettingsOf(ctx.config);
  const doors = taskDoors(ctx, settings);
  return new Elysia({ name: "media" })
    .use(estimateRoutes(ctx))
    .use(fileRoutes(ctx, createStorage(settings.storage)))
    .use(upstreamEventRoutes(ctx))
    .use(nativeTaskRoutes(ctx, doors))
    .use(aliasTaskRoutes(ctx, doors));
}

function estimateRoutes(ctx: AppContext) {
  return new Elysia({ name: "media-estimate" })
    .use(routeGuards(ctx))
    .post("/v1/credits/estimate", ({ body }) => estimate(ctx, body), {
      publicLimit: "estimate",
      body: EstimateBody,
      response: EstimateResponse,
      detail: {
        tags: ["Credits"],
        summary: "Estimate a media task's credits without charging (no key needed)",
        ...errorCodes({
          410: ["model_retired"],
          422: ["model_not_found", "invalid_max_credits"],
          429: ["rate_limit_exceeded"],
        }),
        description:
          "Validates like task creation; required fields that cannot change the price (a prompt) may be left out.",
      },
    });
}

/** Result files, public under an unguessable token. */
function fileRoutes(ctx: AppContext, storage: Storage) {
  return new Elysia({ name: "media-files" }).get(
    "/files/:token/:name",
    async ({ params }) => {
      const file = await findResultFile(ctx, params.token);
      if (!file?.storage_key.endsWith("/" + params.name)) throw notFound("File");
      if (file.deleted_at || file.expires_at <= Date.now())
        throw new ApiError(410, "file_expired", "This result file has expired and was deleted.");
      const body = await storage.get(file.storage_key);
      if (!body) {
        // The row says the file was stored, and storage has no such file: most often processes on several hosts
        // each with a STORAGE_DIR of their own (README: Scale out). The operator's to fix, not a bad link.
        ctx.log.error("result file missing from storage", { file: params.token, storage_key: file.storage_key });
        throw new ApiError(
          503,
          "file_unavailable",
          "This result file cannot be read from the gateway's storage just now; the operator has been told.",
          { type: "service_unavailable" },
        );
      }
      // Files come from upstreams and are served from the gateway's own origin: only allowed media types (a row
      // stored before that rule may say text/html), never sniffed, and sandboxed should a browser render one anyway.
      return new Response(body, {
        headers: {
          "content-type": servableType(file.content_type),
          "cache-control": "private, max-age=86400",
          "x-content-type-options": "nosniff",
          "content-security-policy": "sandbox",
        },
      });
    },
    {
      detail: {
        tags: ["Media tasks"],
        summary: "A task's result file (public, under an unguessable token)",
        ...bodyType("application/octet-stream"),
        ...alsoBodyType(SERVABLE_TYPES),
        ...errorCodes({ 404: ["not_found"], 410: ["file_expired"], 503: ["file_unavailable"] }),
      },
    },
  );
}

function upstreamEventRoutes(ctx: AppContext) {
  return new Elysia({ name: "media-upstream-events" }).use(routeGuards(ctx)).post(
    "/v1/media/upstream-events/:provider",
    async ({ body }) => {
      // An upstream's own completion notice (kie Suno insists on one).
      const ref = (body as any)?.data?.task_id ?? (body as any)?.data?.taskId;
      if (typeof ref === "string") await pollSoon(ctx, ref);
      return { code: 200, msg: "success" };
    },
    {
      publicLimit: "upstream-events",
      body: t.Record(t.String(), t.Unknown(), {
        description: "The upstream's own notice (kie: {code, msg, data: {task_id}}).",
      }),
      response: t.Object({ code: t.Integer(), msg: t.String() }),
      detail: {
        tags: ["Media tasks"],
        summary:
          "Completion notices from upstreams (kie Suno's callBackUrl); they only bring the task's next poll forward",
        ...errorCodes({ 429: ["rate_limit_exceeded"] }), // publicLimit: per address
      },
    },
  );
}
