// catalog:check — the catalog against each configured provider's own list of models: models served but not sold,
// sold but no longer served, and differing prices or token limits where the list states them. Run from cron; any
// finding makes the exit status 1, as does a time-of-day schedule whose holiday list ends within 30 days (the
// operator must list the next year's holidays before weekday holidays bill at peak). Each provider is a row of
// LISTERS (where its list is, how to authenticate, how to read a page, which ids this gateway could sell).

import type { Catalog } from "./service";
import type { LlmModel } from "./model";
import { utcDay } from "./lifecycle";
import { holidayListsEnding } from "./peak";
import { splitKeys } from "../llm/providers";

/** One model as a provider's list states it; prices in USD per million tokens. */
export interface ListedModel {
  id: string;
  aliases?: string[];
  input?: number;
  output?: number;
  cache_read?: number;
  context_window?: number;
  max_output_tokens?: number;
}

interface Page {
  models: ListedModel[];
  /** the URL of the next page, if any */
  next?: string;
}

interface Lister {
  keyVar: string;
  baseVar: string;
  firstPage(base: string): string;
  headers(key: string): Record<string, string>;
  read(json: any, url: string): Page;
  /** ids this gateway could sell from the provider */
  sells(id: string): boolean;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const ids = (json: any): ListedModel[] =>
  (Array.isArray(json?.data) ? json.data : [])
    .filter((m: any) => typeof m?.id === "string")
    .map((m: any) => ({ id: m.id }));
/** xAI states prices in units of 1/100 US cent per million tokens. */
const xaiUsd = (v: unknown) => (typeof v === "number" ? v / 10_000 : undefined);
const positive = (v: unknown) => (typeof v === "number" && v > 0 ? v : undefined);

const LISTERS: Record<string, Lister> = {
  anthropic: {
    keyVar: "ANTHROPIC_API_KEY",
    baseVar: "ANTHROPIC_BASE_URL",
    firstPage: (b) => `${b}/v1/models?limit=1000`,
    headers: (key) => ({ "x-api-key": key, "anthropic-version": "2023-06-01" }),
    read: (json, url) => ({
      models: (Array.isArray(json?.data) ? json.data : []).map((m: any) => ({
        id: m.id,
        context_window: positive(m.max_input_tokens),
        max_output_tokens: positive(m.max_tokens),
      })),
      next:
        json?.has_more && json.last_id
          ? `${url.split("&after_id=")[0]}&after_id=${encodeURIComponent(json.last_id)}`
          : undefined,
    }),
    sells: (id) => id.startsWith("claude-"),
  },
  openai: {
    keyVar: "OPENAI_API_KEY",
    baseVar: "OPENAI_BASE_URL",
    firstPage: (b) => `${b}/models`,
    headers: bearer,
    read: (json) => ({ models: ids(json) }),
    sells: (id) =>
      /^(gpt-|o\d|codex-|text-embedding-)/.test(id) &&
      !/(audio|realtime|transcribe|tts|image|search|instruct|chat-latest)/.test(id),
  },
  gemini: {
    keyVar: "GEMINI_API_KEY",
    baseVar: "GEMINI_BASE_URL",
    firstPage: (b) => `${b}/v1beta/models?pageSize=1000`,
    headers: (key) => ({ "x-goog-api-key": key }),
    read: (json, url) => ({
      models: (Array.isArray(json?.models) ? json.models : [])
        .filter((m: any) => typeof m?.name === "string")
        .map((m: any) => ({
          id: m.name.replace(/^models\//, ""),
          context_window: positive(m.inputTokenLimit),
          max_output_tokens: positive(m.outputTokenLimit),
        })),
      next: json?.nextPageToken
        ? `${url.split("&pageToken=")[0]}&pageToken=${encodeURIComponent(json.nextPageToken)}`
        : undefined,
    }),
    sells: (id) => /^gemini-/.test(id) && !/(image|tts|live|audio|robotics|computer-use)/.test(id),
  },
  xai: {
    keyVar: "XAI_API_KEY",
    baseVar: "XAI_BASE_URL",
    firstPage: (b) => `${b}/language-models`,
    headers: bearer,
    read: (json) => ({
      models: (Array.isArray(json?.models) ? json.models : [])
        .filter((m: any) => typeof m?.id === "string")
        .map((m: any) => ({
          id: m.id,
          aliases: Array.isArray(m.aliases) ? m.aliases : [],
          input: xaiUsd(m.prompt_text_token_price),
          output: xaiUsd(m.completion_text_token_price),
          cache_read: xaiUsd(m.cached_prompt_text_token_price),
        })),
    }),
    sells: (id) => id.startsWith("grok-"),
  },
  deepseek: {
    keyVar: "DEEPSEEK_API_KEY",
    baseVar: "DEEPSEEK_BASE_URL",
    firstPage: (b) => `${b}/models`,
    headers: bearer,
    read: (json) => ({ models: ids(json) }),
    sells: () => true,
  },
};

export interface ProviderFindings {
  /** served by the provider, sold by the gateway under no id */
  missing: string[];
  /** sold by the gateway (current or legacy), no longer in the provider's list */
  not_served: string[];
  /** a price or limit the provider's list states differently */
  differs: Array<{ model: string; field: string; catalog: number | null; provider: number }>;
  /** sold models whose peak schedule's holiday list ends within 30 days or has ended (present only when some do) */
  holiday_lists_ending?: ReturnType<typeof holidayListsEnding>;
  error?: string;
}

export interface DriftReport {
  ok: boolean;
  providers: Record<string, ProviderFindings>;
  /** providers without a key: not asked */
  skipped: string[];
}

const MAX_PAGES = 20;

export async function checkCatalog(
  catalog: Catalog,
  raw: Record<string, string | undefined>,
  fetchImpl: typeof fetch = fetch,
): Promise<DriftReport> {
  catalog.retireExpired();
  const report: DriftReport = { ok: true, providers: {}, skipped: [] };
  for (const [name, lister] of Object.entries(LISTERS)) {
    const key = splitKeys(raw[lister.keyVar])[0];
    if (!key) {
      report.skipped.push(name);
      continue;
    }
    const base = (raw[lister.baseVar] ?? "").replace(/\/+$/, "");
    let listed: ListedModel[] | undefined;
    let error: string | undefined;
    try {
      listed = await listAll(lister, base, key, fetchImpl);
    } catch (e) {
      error = (e as Error).message;
    }
    const findings: ProviderFindings = listed
      ? compare(
          catalog,
          name,
          listed.filter((m) => lister.sells(m.id)),
        )
      : { missing: [], not_served: [], differs: [], error };
    const ending = holidayListsEnding(servedBy(catalog, name), utcDay(catalog.now()));
    if (ending.length) findings.holiday_lists_ending = ending;
    report.providers[name] = findings;
    const found = [findings.missing, findings.not_served, findings.differs, ending].some((list) => list.length);
    if (found || findings.error) report.ok = false;
  }
  return report;
}

async function listAll(lister: Lister, base: string, key: string, fetchImpl: typeof fetch): Promise<ListedModel[]> {
  const out: ListedModel[] = [];
  let url: string | undefined = lister.firstPage(base);
  for (let page = 0; url && page < MAX_PAGES; page++) {
    const res = await fetchImpl(url, { headers: lister.headers(key), signal: AbortSignal.timeout(30_000) });
    // The status only: an upstream's error text can echo the key or account details.
    if (!res.ok) throw new Error(`GET ${url.split("?")[0]} answered HTTP ${res.status}`);
    const { models, next }: Page = lister.read(await res.json(), url);
    out.push(...models);
    url = next;
  }
  return out;
}

/** A dated or versioned snapshot names the model it snapshots ("gpt-5-2025-08-07", "gemini-2.0-flash-001"). */
const SNAPSHOT = /-(\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest)$/;

/** The provider's models the gateway still sells (a retired one is refused with 410 anyway). */
const servedBy = (catalog: Catalog, provider: string) =>
  catalog.llmList.filter((m) => m.provider === provider && catalog.lifecycle.get(m.id)?.status !== "retired");

function compare(catalog: Catalog, provider: string, listed: ListedModel[]): ProviderFindings {
  const sold = catalog.llmList.filter((m) => m.provider === provider);
  const names = new Set<string>();
  for (const m of sold) for (const n of [m.id, m.upstream_model, ...(m.aliases ?? [])]) names.add(n);
  const listedNames = new Map<string, ListedModel>();
  for (const l of listed) for (const n of [l.id, ...(l.aliases ?? [])]) listedNames.set(n, l);

  const findings: ProviderFindings = { missing: [], not_served: [], differs: [] };
  for (const l of listed) {
    const known = [l.id, l.id.replace(SNAPSHOT, ""), ...(l.aliases ?? [])].some((n) => names.has(n));
    if (!known) findings.missing.push(l.id);
  }
  for (const m of sold) {
    if (catalog.lifecycle.get(m.id)?.status === "retired") continue; // refused with 410 anyway
    const l = listedNames.get(m.upstream_model);
    if (!l) {
      findings.not_served.push(m.id);
      continue;
    }
    findings.differs.push(...differences(m, l));
  }
  return findings;
}

const COMPARED: Array<[field: string, ours: (m: LlmModel) => number | undefined, theirs: keyof ListedModel]> = [
  ["pricing.input", (m) => m.pricing.input, "input"],
  ["pricing.output", (m) => m.pricing.output, "output"],
  ["pricing.cache_read", (m) => m.pricing.cache_read, "cache_read"],
  ["context_window", (m) => m.context_window, "context_window"],
  ["max_output_tokens", (m) => m.max_output_tokens, "max_output_tokens"],
];

function differences(m: LlmModel, l: ListedModel): ProviderFindings["differs"] {
  const out: ProviderFindings["differs"] = [];
  for (const [field, ours, key] of COMPARED) {
    const theirs = l[key] as number | undefined;
    if (theirs === undefined) continue;
    const mine = ours(m);
    // Prices compare in whole µcr per million tokens, so 0.1 + 0.2 style float noise is not a finding.
    if (mine === undefined || Math.round(mine * 1e6) !== Math.round(theirs * 1e6))
      out.push({ model: m.id, field, catalog: mine ?? null, provider: theirs });
  }
  return out;
}
