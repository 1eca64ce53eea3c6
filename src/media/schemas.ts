// Request and response schemas of the media routes (TypeBox via Elysia's `t`), published in OpenAPI.
import { t } from "elysia";

const Money = { description: "Credits (1 credit = 0.001 USD)." };
/** max_credits: a number or a decimal string of credits (at most 6 decimals), as on the LLM endpoints (ledger/units.ts
 *  checks it: a malformed one is a 422 invalid_max_credits); null is the same as absent. */
const Budget = (description?: string) =>
  t.Optional(t.Nullable(t.Union([t.Number(), t.String()], { ...Money, ...(description && { description }) })));

/** Other fields pass the schema so that task-routes.ts can refuse them by name: with additionalProperties false,
 *  Elysia would drop them silently, a misspelt maxCredits with them. */
export const CreateTaskBody = t.Object(
  {
    model: t.String({ description: "A media model id from GET /v1/models (type image, video or audio)." }),
    input: t.Optional(
      t.Record(t.String(), t.Any(), {
        description: "The model's input fields (see its model card); checked before anything is charged.",
      }),
    ),
    callBackUrl: t.Optional(
      t.String({ description: "POSTed the task record on success or failure; must be a public http(s) address." }),
    ),
    max_credits: Budget(
      "Budget guard: refuse (nothing created) when the estimate is higher. A number or a decimal string.",
    ),
  },
  { additionalProperties: true },
);

export const Envelope = (data: any) =>
  t.Object({ code: t.Integer({ description: "200, or the error's HTTP status" }), msg: t.String(), data });

export const TaskRecord = t.Object({
  taskId: t.String(),
  model: t.String(),
  state: t.Union([t.Literal("waiting"), t.Literal("generating"), t.Literal("success"), t.Literal("fail")]),
  param: t.String({ description: "The creation request, as a JSON string." }),
  resultJson: t.String({
    description:
      'JSON string {"resultUrls":[...]} on success (empty otherwise); {"resultUrls":[],"resultsExpired":true} once the files have expired.',
  }),
  failCode: t.String(),
  failMsg: t.String(),
  costTime: t.Integer({ description: "ms from creation to completion" }),
  createTime: t.Integer({ description: "Unix ms" }),
  updateTime: t.Integer({ description: "Unix ms" }),
  completeTime: t.Nullable(t.Integer({ description: "Unix ms" })),
  creditsConsumed: t.Integer({ description: "Whole credits charged (0 unless success)." }),
  estimatedCredits: t.Integer({ description: "Credits held at creation." }),
  resultsExpireTime: t.Nullable(t.Integer({ description: "Unix ms when the result files are deleted." })),
  resultsExpired: t.Boolean(),
});

export const AliasBody = t.Object(
  {
    model: t.String({ description: "Any media model id; the model decides which other fields are accepted." }),
    prompt: t.Optional(t.String({ description: "Text prompt (most models)." })),
    duration: t.Optional(t.Number({ description: "Seconds (video and some audio models)." })),
    resolution: t.Optional(t.String({ description: "e.g. 720p, 1K (model dependent)." })),
    max_credits: Budget(
      "Budget guard: refuse (nothing created) when the estimate is higher. A number or a decimal string.",
    ),
    callback_url: t.Optional(
      t.String({ description: "POSTed the task record on success or failure; must be a public http(s) address." }),
    ),
  },
  {
    additionalProperties: true,
    description: "model, max_credits and callback_url; every other field becomes the task input.",
  },
);

const Status = t.Union([t.Literal("pending"), t.Literal("processing"), t.Literal("succeeded"), t.Literal("failed")]);

export const AliasCreated = t.Object({
  id: t.String(),
  task_id: t.String(),
  object: t.String({ description: "gateway.image.task, gateway.video.task or gateway.audio.task" }),
  status: Status,
  model: t.String(),
  estimated_credits: t.Integer(Money),
  created_at: t.Integer({ description: "Unix seconds" }),
});

export const AliasStatus = t.Composite([
  AliasCreated,
  t.Object({
    state: t.String({ description: "The native state: waiting, generating, success or fail." }),
    result_urls: t.Array(t.String(), {
      description: "Gateway URLs of the result files (empty until success, and after expiry).",
    }),
    results_expired: t.Boolean(),
    results_expire_at: t.Nullable(t.Integer({ description: "Unix seconds" })),
    error: t.Nullable(t.Object({ code: t.String(), message: t.String() })),
    credits_consumed: t.Integer(Money),
    completed_at: t.Nullable(t.Integer({ description: "Unix seconds" })),
  }),
]);

export const EstimateBody = t.Object(
  {
    model: t.String(),
    modality: t.Optional(
      t.String({ description: "image, video or audio (music is accepted for audio); checked against the model." }),
    ),
    duration: t.Optional(t.Number({ description: "Seconds." })),
    resolution: t.Optional(t.String()),
    input_mode: t.Optional(t.String({ description: "e.g. text-to-video; echoed back." })),
    max_credits: Budget(),
    input: t.Optional(
      t.Record(t.String(), t.Any(), { description: "Task input fields (may also be given at the top level)." }),
    ),
  },
  { additionalProperties: true },
);

export const EstimateResponse = t.Object({
  model: t.String(),
  modality: t.String(),
  input_mode: t.String(),
  estimated_credits: t.Integer(Money),
  estimated_usd: t.Number(),
  max_credits: t.Nullable(t.Number()),
  within_budget: t.Boolean({
    description: "Whether a task with this max_credits would be accepted (true without max_credits).",
  }),
  breakdown: t.Object({
    unit: t.String({ description: "What one price buys: image, megapixel, second, clip, 1k_chars, request." }),
    unit_usd: t.Optional(t.String()),
    quantity: t.Record(t.String(), t.Number(), { description: "images / seconds / characters the estimate assumes." }),
    priced_by: t.Record(t.String(), t.Any(), { description: "The input values that select the price." }),
    input: t.Record(t.String(), t.Any(), { description: "The validated input with defaults applied." }),
  }),
});
