// The keyed task doors' shared parts (the task service, creation under an Idempotency-Key, the documented refusals)
// and the native task API: kie Market's shape, errors in the {code,msg,data} envelope. The OpenAI-style aliases
// (alias-routes.ts) create and read the same tasks.
import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { routeGuards } from "../http/guards";
import { Idempotency, idempotent } from "../http/idempotency";
import { errorCodes, takesIdempotencyKey } from "../http/route-docs";
import { CreateTaskBody, Envelope, TaskRecord } from "./schemas";
import { TaskService } from "./service";
import type { MediaSettings } from "./settings";
import type { CallingKey } from "./task-requests";
import { taskRecord } from "./views";

export const security: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }];
/** What task creation can refuse, beyond the key guard's 401/429 (in /openapi.json). A new object per route:
 *  Elysia merges route details into the objects it is given. */
export const createErrors = () => ({
  ...errorCodes({
    402: ["insufficient_credits", "max_credits_exceeded", "key_budget_exceeded"],
    403: ["model_not_allowed"],
    410: ["model_retired"],
    422: ["model_not_found", "wrong_endpoint", "invalid_callback_url", "invalid_max_credits"],
    429: ["too_many_running_tasks"],
    503: ["limits_unavailable"],
  }),
  ...takesIdempotencyKey(),
});

/** What both keyed doors share: one task service, one idempotency store, the public base URL. */
export interface TaskDoors {
  tasks: TaskService;
  /** Task creation under an Idempotency-Key (http/idempotency.ts): a repeat gets the same task, created once. */
  once<T>(request: Request, auth: CallingKey, body: unknown, create: () => Promise<T>): Promise<T>;
  /** Read per request: tests and operators may set it after start. */
  base(): string;
}

export function taskDoors(ctx: AppContext, settings: MediaSettings): TaskDoors {
  const idem = new Idempotency(ctx.db);
  return {
    tasks: new TaskService(ctx, settings),
    once: <T>(request: Request, auth: CallingKey, body: unknown, create: () => Promise<T>) =>
      idempotent(
        idem,
        request,
        auth.accountId,
        () => JSON.stringify(body),
        create,
        (r) => ({ status: 200, contentType: "application/json", body: JSON.stringify(r) }),
        (e) => ctx.log.error("idempotent answer not stored", { error: (e as Error)?.message ?? String(e) }),
      ) as Promise<T>, // or a replay's Response, which Elysia sends as it is
    base: () => ctx.config.publicBaseUrl,
  };
}

/** The key's fields a task is created with, out of the guard's whole key record. */
export const callingKey = (auth: CallingKey): CallingKey => ({
  keyId: auth.keyId,
  accountId: auth.accountId,
  maxConcurrentTasks: auth.maxConcurrentTasks,
  models: auth.models,
  budget: auth.budget,
});

/** The native body's fields; the model's input goes in `input`. */
const NATIVE_FIELDS = new Set(["model", "input", "callBackUrl", "max_credits"]);

/** Any other field is refused by name, as an unknown input field is: a misspelt budget guard (`maxCredits`) or
 *  callback (`callbackUrl`) would otherwise be dropped, and the task run and charged without it. */
function refuseUnknownFields(body: Record<string, unknown>): void {
  const unknown = Object.keys(body).find((k) => !NATIVE_FIELDS.has(k));
  if (unknown === undefined) return;
  throw new ApiError(
    422,
    "invalid_request",
    `unknown field ${JSON.stringify(unknown)} (allowed: ${[...NATIVE_FIELDS].join(", ")}; the model's fields go in input)`,
    { param: unknown },
  );
}

export function nativeTaskRoutes(ctx: AppContext, { tasks, once, base }: TaskDoors) {
  return new Elysia({ name: "media-native-tasks" })
    .use(routeGuards(ctx))
    .post(
      "/api/v1/jobs/createTask",
      ({ body, auth, request }) =>
        once(request, auth, body, async () => {
          refuseUnknownFields(body);
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
    );
}
