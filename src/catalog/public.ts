// The public record of a model in GET /v1/models: the OpenAI list shape plus prices, endpoint and lifecycle.

import type { MediaModel } from "../media/model";
import type { Lifecycle, ModelStatus } from "./lifecycle";
import { endpointsOf, TASK_ENDPOINT, type LlmModel } from "./model";

export function publicLlm(m: LlmModel, life: Lifecycle & { status: ModelStatus }) {
  const pricing: Record<string, number> = { input: m.pricing.input };
  if (m.type === "llm") pricing.output = m.pricing.output!;
  if (m.pricing.cache_read != null) pricing.cache_read = m.pricing.cache_read;
  if (m.pricing.cache_write != null) pricing.cache_write = m.pricing.cache_write;
  if (m.pricing.cache_write_1h != null) pricing.cache_write_1h = m.pricing.cache_write_1h;
  if (m.pricing.web_search_per_1k_calls != null) pricing.web_search_per_1k_calls = m.pricing.web_search_per_1k_calls;
  const long = m.pricing.long_context;
  return {
    id: m.id,
    object: "model",
    owned_by: m.provider,
    type: m.type,
    name: m.name,
    description: m.description,
    endpoint: m.endpoint,
    endpoints: endpointsOf(m),
    aliases: m.aliases ?? [],
    ...lifecycleFields(life),
    context_window: m.context_window ?? null,
    max_output_tokens: m.max_output_tokens ?? null,
    capabilities: m.capabilities,
    pricing: {
      currency: "USD",
      unit: "per_million_tokens",
      ...pricing,
      ...(long && { long_context: long }),
      ...(m.pricing.peak && { peak: m.pricing.peak }),
    },
  };
}

export function publicMedia(m: MediaModel, life: Lifecycle & { status: ModelStatus }) {
  return {
    id: m.id,
    object: "model",
    owned_by: m.routes[0]!.provider,
    type: m.type,
    kind: m.kind,
    name: m.name,
    description: m.description,
    endpoint: TASK_ENDPOINT,
    ...lifecycleFields(life),
    capabilities: [m.kind],
    pricing: { currency: "USD", unit: m.pricingRule.unit, rows: m.priceRows },
  };
}

/** Every lifecycle field, null where the entry does not say, so clients can rely on the keys. */
export function lifecycleFields(life: Lifecycle & { status: ModelStatus }) {
  return {
    status: life.status,
    released: life.released ?? null,
    retires_after: life.retires_after ?? null,
    successor: life.successor ?? null,
    provider_successor: life.provider_successor ?? null,
    source: life.source ?? null,
    checked: life.checked ?? null,
  };
}
