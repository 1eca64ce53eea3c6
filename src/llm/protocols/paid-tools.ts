// Fees an upstream bills on top of tokens, decided from the request before anything is held or sent: tools the
// upstream runs and bills per use, and service tiers above the list price. Web search is priced (Codex CLI offers it
// in every request, so refusing it would refuse Codex); every other fee the gateway cannot meter is refused with a
// clear 400 rather than run at the operator's expense. Each protocol states its rules as data (PaidToolRules).

import { ApiError } from "../../http/errors";
import { jsonTokens, type JsonTokens, mentions } from "../request-fields";

export interface PaidToolRules {
  /** how the type of a `tools[]` entry that is a web search the upstream runs begins; null: none is */
  webSearchType: string | null;
  /** the most searches the request allows, when it says (Anthropic `max_uses`, Responses `max_tool_calls`) */
  searchLimit(body: Record<string, any>, tool: Record<string, any>): number | undefined;
  /** tool type prefixes the gateway cannot meter, and how the upstream bills them */
  refusedTools: ReadonlyArray<readonly [prefix: string, billed: string]>;
  /** request fields the gateway cannot meter, and what a value costs (undefined: that value is fine) */
  refusedFields: ReadonlyArray<readonly [field: string, cost: (value: unknown) => string | undefined]>;
}

export interface PaidToolUse {
  /** the request offers the model a web search it prices */
  webSearch: boolean;
  /** searches to hold for: the request's own limit, else DEFAULT_HELD_SEARCHES */
  heldSearches: number;
  /** web-search tool types offered to a model with no search price here: left out upstream, named to the client */
  unpriced?: string[];
}

/** Searches held for when the request states no limit. More are still charged (an overrun, ledger/service.ts). */
export const DEFAULT_HELD_SEARCHES = 5;

export const NO_PAID_TOOLS: Readonly<PaidToolUse> = Object.freeze({ webSearch: false, heldSearches: 0 });

/** What the request will be billed beyond tokens; throws a 400 for what cannot be metered. */
// Web search costs the model's catalog price per search (`web_search_per_1k_calls`), counted from the answer. On a
// model the catalog gives no search price, an offered search tool is left out of the upstream request and named in
// the answer's x-switchyard-dropped-tools header, as translated calls do (Codex CLI offers web_search in every
// request: refusing would refuse Codex); a request that forces it is refused.
export function paidToolUse(
  rules: PaidToolRules,
  body: Record<string, any>,
  model: { id: string; prices: { webSearch?: number } },
): PaidToolUse {
  for (const [field, cost] of rules.refusedFields) {
    if (body[field] === undefined) continue;
    const why = cost(body[field]);
    if (why) refuse(field, `\`${field}\`: ${why}, which this gateway does not meter. Send the request without it.`);
  }
  // The tool schemas are parsed only when the body's bytes mention a type these rules look for.
  if (!mentions(body, "tools", toolTypesOf(rules))) return NO_PAID_TOOLS;
  const tools = body.tools;
  if (!Array.isArray(tools)) return NO_PAID_TOOLS;
  let use: PaidToolUse = NO_PAID_TOOLS;
  for (const tool of tools) {
    if (typeof tool !== "object" || tool === null || typeof tool.type !== "string") continue;
    if (rules.webSearchType !== null && tool.type.startsWith(rules.webSearchType)) {
      if (model.prices.webSearch === undefined) {
        use = { ...use, unpriced: [...(use.unpriced ?? []), tool.type] };
        continue;
      }
      use = { ...use, webSearch: true, heldSearches: rules.searchLimit(body, tool) ?? DEFAULT_HELD_SEARCHES };
      continue;
    }
    for (const [prefix, billed] of rules.refusedTools) {
      if (tool.type.startsWith(prefix))
        refuse(
          "tools",
          `The \`${tool.type}\` tool is billed by the upstream ${billed}, which this gateway does not meter. Send the request without it.`,
        );
    }
  }
  if (use.unpriced && forcesUnpriced(body.tool_choice, use.unpriced, tools.length))
    refuse(
      "tool_choice",
      `Model ${model.id} has no web-search price on this gateway, so its \`${use.unpriced[0]}\` tool cannot be billed and is left out; \`tool_choice\` forces it. Send the request without it, or use a model that lists web_search_per_1k_calls in GET /v1/models.`,
    );
  return use;
}

/** Whether `tool_choice` makes the model call a tool left out: by its type, or "required" when no other is left. */
function forcesUnpriced(choice: unknown, unpriced: string[], offered: number): boolean {
  if (typeof choice === "object" && choice !== null) return unpriced.includes((choice as { type?: any }).type);
  return choice === "required" && unpriced.length === offered;
}

/**
 * The request without the tools `paid.unpriced` names; with none left, without `tools` and `tool_choice` (a request
 * that forced one of them was refused in paidToolUse).
 */
export function withoutUnpricedTools(body: Record<string, any>, paid: PaidToolUse): Record<string, any> {
  const dropped = new Set(paid.unpriced);
  const tools = (body.tools as any[]).filter((t) => !dropped.has(t?.type));
  if (tools.length) return { ...body, tools };
  const { tools: _tools, tool_choice: _choice, ...rest } = body;
  return rest;
}

const toolTypes = new WeakMap<PaidToolRules, JsonTokens>();

/** The openings of the tool types `rules` look for, as they begin in JSON (`"web_search_`). */
function toolTypesOf(rules: PaidToolRules): JsonTokens {
  let types = toolTypes.get(rules);
  if (!types) {
    const prefixes = [
      ...(rules.webSearchType === null ? [] : [rules.webSearchType]),
      ...rules.refusedTools.map(([prefix]) => prefix),
    ];
    types = jsonTokens(...prefixes.map((prefix) => `"${prefix}`));
    toolTypes.set(rules, types);
  }
  return types;
}

function refuse(param: string, message: string): never {
  throw new ApiError(400, "unsupported_parameter", message, { param });
}

/** `service_tier: "priority"` on OpenAI-family APIs: billed above the list prices the catalog holds. */
export function priorityTier(value: unknown): string | undefined {
  return value === "priority" ? "priority processing is billed above the list price" : undefined;
}
