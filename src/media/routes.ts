// The media front doors (one Elysia instance): the native task API (kie Market shape, errors in the {code,msg,data}
// envelope), the OpenAI-style aliases, the public estimate, result files, and the endpoint upstreams notify.
// All of them end up in TaskService; none of them talks to an upstream.
import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { ApiError, notFound } from "../http/errors";
import { routeGuards } from "../http/guards";
import { estimate } from "./estimate";
import {
  AliasBody,
  AliasCreated,
  AliasStatus,
  CreateTaskBody,
  Envelope,
  EstimateBody,
  EstimateResponse,
  TaskRecord,
} from "./schemas";
import { findResultFile, pollSoon, TaskService } from "./service";
import { requireModel, type CallingKey, type CreateRequest } from "./task-requests";
import { ALIAS_PATH } from "../catalog/endpoints";
import type { MediaType } from "./model";
import { mediaSettingsOf } from "./settings";
import { createStorage, servableType } from "./storage";
import { aliasCreated, aliasStatus, taskRecord } from "./views";
import { Idempotency, idempotent } from "../http/idempotency";

import { bodyType, errorCodes } from "../http/route-docs";

const security: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }];
/** What task creation can refuse, beyond the key guard's 401/429 (in /openapi.json). A new object per route:
 *  Elysia merges route details into the objects it is given. */
const createErrors = () =>
  errorCodes({
    402: ["insufficient_credits", "max_credits_exceeded"],
    422: ["model_not_found", "wrong_endpoint", "invalid_callback_url", "invalid_max_credits"],
    429: ["too_many_running_tasks"],
    503: ["limits_unavailable"],
  });
const ALIAS_FIELDS = new Set(["model", "max_credits", "callback_url"]);

export function mediaRoutes(ctx: AppContext) {
  const settings = mediaSettingsOf(ctx.config);
  const tasks = new TaskService(ctx, settings);
  const storage = createStorage(settings.storage);
  const base = () => ctx.config.publicBaseUrl; // read per request: tests and operators may set it after start
  const callingKey = (auth: CallingKey): CallingKey => ({
    keyId: auth.keyId,
    accountId: auth.accountId,
    maxConcurrentTasks: auth.maxConcurrentTasks,
    models: auth.models,
    budget: auth.budget,
  });
  const typeOf = (model: string) => ctx.catalog.media.get(model)?.type ?? "media";

  const alias = (summary: string) => ({
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
  // Task creation under an Idempotency-Key (http/idempotency.ts): a repeat gets the same task, created once.
  const idem = new Idempotency(ctx.db);
  const once = <T>(request: Request, auth: CallingKey, body: unknown, create: () => Promise<T>) =>
    idempotent(
      idem,
      request,
      auth.accountId,
      () => JSON.stringify(body),
      create,
      (r) => ({ status: 200, contentType: "application/json", body: JSON.stringify(r) }),
      (e) => ctx.log.error("idempotent answer not stored", { error: (e as Error)?.message ?? String(e) }),
    ) as Promise<T>; // or a replay's Response, which Elysia sends as it is
  const createAlias =
    (type: MediaType) =>
    ({ body, auth, request }: { body: Record<string, unknown>; auth: CallingKey; request: Request }) =>
      once(request, auth, body, () => createAliasTask(type, body, auth));
  const createAliasTask = async (type: MediaType, body: Record<string, unknown>, auth: CallingKey) => {
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
    const req: CreateRequest = {
      model: body.model,
      input,
      callbackUrl: body.callback_url,
      maxCredits: body.max_credits,
      param: body,
      names: { callback: "callback_url", inputPrefix: "" },
    };
    const row = await tasks.create(callingKey(auth), req);
    return aliasCreated(row, typeOf(row.model));
  };

  return new Elysia({ name: "media" })
    .use(routeGuards(ctx))
    .post("/v1/credits/estimate", ({ body }) => estimate(ctx, body), {
      publicLimit: "estimate",
      body: EstimateBody,
      response: EstimateResponse,
      detail: {
        tags: ["Credits"],
        summary: "Estimate a media task's credits without charging (no key needed)",
        ...errorCodes({ 422: ["model_not_found", "invalid_max_credits"], 429: ["rate_limit_exceeded"] }),
        description:
          "Validates like task creation; required fields that cannot change the price (a prompt) may be left out.",
      },
    })
    .get(
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
          ...errorCodes({ 404: ["not_found"], 410: ["file_expired"], 503: ["file_unavailable"] }),
        },
      },
    )
    .post(
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
        },
      },
    )
    .post(
      "/api/v1/jobs/createTask",
      ({ body, auth, request }) =>
        once(request, auth, body, async () => {
          const row = await tasks.create(callingKey(auth), {
            model: body.model,
            input: body.input,
            callbackUrl: body.callBackUrl,
            maxCredits: body.max_credits,
            param: body,
            names: { callback: "callBackUrl", inputPrefix: "input." },
          });
          return { code: 200, msg: "success", data: { taskId: row.id } };
        }),
      {
        apiKey: true,
        body: CreateTaskBody,
        response: Envelope(t.Object({ taskId: t.String() })),
        detail: { tags: ["Media tasks"], summary: "Create a media task (native API)", security, ...createErrors() },
      },
    )
    .get(
      "/api/v1/jobs/recordInfo",
      async ({ query, auth }) => {
        const row = await tasks.get(auth.accountId, query.taskId);
        return { code: 200, msg: "success", data: taskRecord(row, base()) };
      },
      {
        apiKey: true,
        query: t.Object({ taskId: t.String({ description: "The task id from createTask" }) }),
        response: Envelope(TaskRecord),
        detail: {
          tags: ["Media tasks"],
          summary: "A task's record (native API)",
          security,
          ...errorCodes({ 404: ["not_found"] }),
        },
      },
    )
    .post(ALIAS_PATH.image, createAlias("image"), alias("Create an image task"))
    .post(ALIAS_PATH.video, createAlias("video"), alias("Create a video task"))
    .post(ALIAS_PATH.audio, createAlias("audio"), alias("Create a music or audio task"))
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
