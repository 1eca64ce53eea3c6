// POST /v1/credits/estimate: the creation price rule applied without creating or charging anything. Fields are
// validated exactly as createTask validates them, with one difference: a required field the price cannot depend on
// (a prompt, an image URL) may be left out — the spec's own example estimates a video from model, duration and
// resolution alone. Text priced per character (TTS) must be given, since it is the price.
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { MICROS_PER_CREDIT, MICROS_PER_USD, microsToCredits } from "../ledger/units";
import { requestedFacts } from "./pricing";
import type { MediaModel, PropertyDef } from "./model";
import { budgetOf, prepareInput, requireModel } from "./task-requests";

const NOT_INPUT = new Set(["model", "modality", "input_mode", "max_credits", "input", "callback_url", "callBackUrl"]);
const MODALITIES: Record<string, string> = {
  image: "image",
  video: "video",
  audio: "audio",
  music: "audio",
  speech: "audio",
  sound: "audio",
};

export function estimate(ctx: AppContext, body: Record<string, unknown>) {
  const model = requireModel(ctx, body.model);
  if (body.modality !== undefined && MODALITIES[String(body.modality)] !== model.type) {
    throw new ApiError(
      422,
      "invalid_request",
      `modality ${JSON.stringify(body.modality)} does not match ${model.id}, a ${model.type} model.`,
      { param: "modality" },
    );
  }
  // fromEntries, not assignment: a field named "__proto__" stays a field (refused by validation, as on task creation)
  // instead of becoming the object's prototype.
  const given: Record<string, unknown> = Object.fromEntries([
    ...Object.entries(typeof body.input === "object" && body.input ? body.input : {}),
    ...Object.entries(body).filter(([k]) => !NOT_INPUT.has(k)),
  ]);
  const p = prepareInput(model, withPlaceholders(model, given), "");
  const budget = budgetOf(body.max_credits);
  const rule = model.pricingRule;
  const facts = requestedFacts(model.pricing, p.value);
  const quantity: Record<string, number> = {};
  for (const [k, v] of Object.entries(facts)) if (typeof v === "number") quantity[k] = v;
  return {
    model: model.id,
    modality: model.type,
    input_mode: typeof body.input_mode === "string" ? body.input_mode : model.kind,
    estimated_credits: Math.round(p.estimate / MICROS_PER_CREDIT),
    estimated_usd: p.estimate / MICROS_PER_USD,
    max_credits: budget === undefined ? null : microsToCredits(budget),
    within_budget: budget === undefined || p.estimate <= budget,
    breakdown: {
      unit: rule.unit,
      ...(rule.usd !== undefined ? { unit_usd: String(rule.usd) } : {}),
      quantity,
      priced_by: Object.fromEntries((rule.by ?? []).map((f) => [f, p.value[f]])),
      input: stripPlaceholders(model, p.value, given),
    },
  };
}

/** Fill required fields that do not affect the price with a valid stand-in, so validation judges only what was given. */
function withPlaceholders(model: MediaModel, given: Record<string, unknown>): Record<string, unknown> {
  const out = { ...given };
  for (const name of model.input.required) {
    if (out[name] !== undefined && out[name] !== null) continue;
    if (
      name === model.pricingRule.text_field ||
      name === model.pricingRule.seconds_field ||
      model.pricingRule.by?.includes(name)
    )
      continue;
    const v = placeholder(model.input.properties[name]!);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

function placeholder(def: PropertyDef): unknown {
  if (def.enum) return def.enum[0];
  switch (def.type) {
    case "string":
      return "x".repeat(Math.max(1, def.minLength ?? 1));
    case "url":
      return "https://example.com/placeholder";
    case "array":
      return Array(Math.max(1, def.minItems ?? 1)).fill(
        def.items === "string" ? "x" : "https://example.com/placeholder",
      );
    case "integer":
    case "number":
      return def.minimum ?? 1;
    case "boolean":
      return false;
  }
}

function stripPlaceholders(model: MediaModel, value: Record<string, unknown>, given: Record<string, unknown>) {
  const out = { ...value };
  for (const name of model.input.required) if (given[name] === undefined) delete out[name];
  return out;
}
