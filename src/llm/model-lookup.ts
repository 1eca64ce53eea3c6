// Which model a request names, and whether the gateway can reach it on the path called: the refusals that need
// nothing but the model's name (400 / 404) and its provider (501 / 503), made before anything is reserved.

import { ALIAS_PATH } from "../catalog/endpoints";
import type { LlmModel } from "../catalog/model";
import { ApiError } from "../http/errors";
import type { LlmDeps } from "./call";
import { keySettingOf, type Provider } from "./providers";

/**
 * Every LLM is served on the three LLM paths (natively on one, translated on the others); embeddings only on
 * /v1/embeddings. `unmetered`: count_tokens, for any LLM.
 */
export function lookupModel(deps: LlmDeps, body: Record<string, any>, path: string, unmetered: boolean): LlmModel {
  const name = body.model;
  if (typeof name !== "string" || !name)
    throw new ApiError(400, "missing_model", "The request body needs a `model`. GET /v1/models lists them.", {
      param: "model",
    });
  const model = deps.ctx.catalog.llm.get(name);
  if (!model) {
    const media = deps.ctx.catalog.findMedia(name);
    if (media) {
      throw new ApiError(
        400,
        "wrong_endpoint",
        `Model ${media.id} makes ${media.type} as an asynchronous task: create it with POST ${ALIAS_PATH[media.type]} or POST /api/v1/jobs/createTask.`,
        { param: "model" },
      );
    }
    throw new ApiError(
      404,
      "model_not_found",
      `Unknown model ${JSON.stringify(name)}. GET /v1/models lists the models and the endpoints serving each.`,
      { param: "model" },
    );
  }
  deps.ctx.catalog.servable(model);
  const embedding = model.endpoint === "/v1/embeddings";
  if (embedding !== (path === "/v1/embeddings") || (unmetered && embedding)) {
    const where = embedding ? "POST /v1/embeddings" : "POST /v1/messages, /v1/responses or /v1/chat/completions";
    throw new ApiError(400, "wrong_endpoint", `Model ${model.id} is served on ${where}, not on ${path}.`, {
      param: "model",
    });
  }
  return model;
}

/** The provider's URL for the call, or the caller's 501 / 503 when the gateway cannot reach the model. */
export function reachable(
  model: LlmModel,
  provider: Provider | undefined,
  url: string | undefined,
  path: string,
): string {
  if (!provider || !url)
    throw new ApiError(
      501,
      "provider_not_supported",
      `Model ${model.id} is served by ${model.provider}, which this gateway cannot reach on ${path}.`,
    );
  if (provider.auth.length === 0) {
    throw new ApiError(
      503,
      "provider_not_configured",
      `Model ${model.id} is unavailable: its provider (${model.provider}) has no API key configured on this gateway (${keySettingOf(model.provider)}).`,
      {
        type: "service_unavailable",
      },
    );
  }
  return url;
}
