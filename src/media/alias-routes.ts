// The OpenAI-style task doors: one creation route per media type (a model of another type is pointed to its own
// route) and the task's status with result URLs. The body is flat: every field but the gateway's own becomes the
// model's task input.
import { Elysia } from "elysia";
import { ALIAS_PATH } from "../catalog/endpoints";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { routeGuards } from "../http/guards";
import { errorCodes } from "../http/route-docs";
import type { MediaType } from "./model";
import { AliasBody, AliasCreated, AliasStatus } from "./schemas";
import { type CallingKey, type CreateRequest, requireModel } from "./task-requests";
import { callingKey, createErrors, security, type TaskDoors } from "./task-routes";
import { aliasCreated, aliasStatus } from "./views";

const ALIAS_FIELDS = new Set(["model", "max_credits", "callback_url"]);

/** A creation route's guard, schemas and documentation (a new object per route: Elysia merges route details into it). */
const aliasRoute = (summary: string) => ({
  apiKey: true as const,
  body: AliasBody,
  response: AliasCreated,
  detail: {
    tags: ["Media tasks"],
    summary,
    security,
    ...createErrors(),
    description:
      "Creates an asynchronous task: `model`, `max_credits` and `callback_url` are the gateway's; every other field becomes the model's task input. Poll `GET /v1/tasks/{task_id}` or wait for the callback.",
  },
});

/** An alias creates tasks of its own media type only: a video model on the images route is pointed to /v1/videos. */
function aliasRequest(ctx: AppContext, type: MediaType, body: Record<string, unknown>): CreateRequest {
  const model = requireModel(ctx, body.model);
  if (model.type !== type) {
    throw new ApiError(
      422,
      "wrong_endpoint",
      `Model ${model.id} makes ${model.type}, not ${type}: create its task with POST ${ALIAS_PATH[model.type]} (or POST /api/v1/jobs/createTask).`,
      { param: "model" },
    );
  }
  const input = Object.fromEntries(Object.entries(body).filter(([k]) => !ALIAS_FIELDS.has(k)));
  return {
    model: body.model,
    input,
    callbackUrl: body.callback_url,
    maxCredits: body.max_credits,
    param: body,
    names: { callback: "callback_url", inputPrefix: "" },
  };
}

export function aliasTaskRoutes(ctx: AppContext, { tasks, once, base }: TaskDoors) {
  const typeOf = (model: string) => ctx.catalog.media.get(model)?.type ?? "media";
  const createAlias =
    (type: MediaType) =>
    ({ body, auth, request }: { body: Record<string, unknown>; auth: CallingKey; request: Request }) =>
      once(request, auth, body, async () => {
        const row = await tasks.create(callingKey(auth), aliasRequest(ctx, type, body));
        return aliasCreated(row, typeOf(row.model));
      });

  return new Elysia({ name: "media-alias-tasks" })
    .use(routeGuards(ctx))
    .post(ALIAS_PATH.image, createAlias("image"), aliasRoute("Create an image task"))
    .post(ALIAS_PATH.video, createAlias("video"), aliasRoute("Create a video task"))
    .post(ALIAS_PATH.audio, createAlias("audio"), aliasRoute("Create a music or audio task"))
    .get(
      "/v1/tasks/:task_id",
      async ({ params, auth }) => {
        const row = await tasks.get(auth.accountId, params.task_id);
        return aliasStatus(row, typeOf(row.model), base());
      },
      {
        apiKey: true,
        response: AliasStatus,
        detail: {
          tags: ["Media tasks"],
          summary: "A task's status with result URLs",
          security,
          ...errorCodes({ 404: ["not_found"] }),
        },
      },
    );
}
