import { t } from "elysia";

// Answers of /v1/models and /v1/models/{model_id} (published in /openapi.json). Open objects: the catalog adds fields.
const Open = <T extends Parameters<typeof t.Object>[0]>(props: T, description?: string) =>
  t.Object(props, { additionalProperties: true, ...(description && { description }) });

const day = (description: string) => t.Union([t.String({ format: "date" }), t.Null()], { description });
const text = (description: string) => t.Union([t.String(), t.Null()], { description });

export const PublicModel = Open({
  id: t.String(),
  object: t.Literal("model"),
  owned_by: t.String(),
  type: t.Union([t.Literal("llm"), t.Literal("embedding"), t.Literal("image"), t.Literal("video"), t.Literal("audio")]),
  // The lifecycle (catalog/lifecycle.ts), on every model, null where the catalog records nothing.
  status: t.Union([t.Literal("current"), t.Literal("legacy"), t.Literal("retired")], {
    description: "current; legacy: still served, superseded; retired: a call answers 410 model_retired.",
  }),
  released: day("The day the provider released it."),
  retires_after: day("The provider's last day of service; retired from the next UTC day on."),
  successor: text("The model to use instead (sold here)."),
  provider_successor: text("The provider's own replacement, when it is not sold here."),
  source: text("The provider page its prices were read from."),
  checked: day("The day they were read."),
  name: t.String(),
  description: t.String(),
  endpoint: t.String({
    description: "The endpoint that serves it: an LLM protocol's path, or /api/v1/jobs/createTask for media.",
  }),
  capabilities: t.Array(t.String()),
  pricing: Open(
    { currency: t.Literal("USD"), unit: t.String() },
    "USD prices: per million tokens for LLMs and embeddings, per unit (rows) for media.",
  ),
});

export const ModelList = Open({ object: t.Literal("list"), data: t.Array(PublicModel) });

export const ModelCard = t.Composite(
  [
    PublicModel,
    Open({
      card_url: t.String({ description: "The model's card for people." }),
      price_rows: t.Array(t.Record(t.String(), t.Any()), {
        description: "One row per priced variant, USD and credits.",
      }),
      input_schema: t.Optional(
        t.Record(t.String(), t.Any(), {
          description:
            "Media models: the JSON Schema of the task `input` (native door) or of the body's other fields (OpenAI-style doors).",
        }),
      ),
      example: t.Optional(
        t.Record(t.String(), t.Any(), {
          description:
            "Example requests (curl and SDK) and, for media, an estimate; absent for a retired model, which is not served.",
        }),
      ),
    }),
  ],
  { additionalProperties: true },
);
