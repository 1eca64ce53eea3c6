import type { Catalog } from "../catalog/service";
import type { ModelType } from "../catalog/model";
import { html, layout, raw, type Raw } from "./layout";
import { cardPath } from "./model-card-facts";
import { allListings, TYPE_LABEL, TYPE_ORDER, type Listing, type PriceRow } from "./pricing-data";

// The public pricing page. Filtering happens on the server from GET query parameters, so the page works without
// JavaScript; a small inline script only spares the reload. Each distinct filter is rendered once and kept, keyed by
// its canonical query, with an ETag made from the catalog's fingerprint: a new catalog means new tags.

export interface PricingFilter {
  type: ModelType | "";
  provider: string;
  q: string;
}

const MAX_CACHED = 256; // distinct filters kept; query text is user-chosen, so the cache must be bounded
const CACHE_CONTROL = "public, max-age=300";

export class PricingPage {
  readonly listings: Listing[];
  readonly providers: string[];
  private readonly cache = new Map<string, { body: string; etag: string }>();

  constructor(private readonly catalog: Catalog) {
    this.listings = allListings(catalog);
    this.providers = [...new Set(this.listings.map((l) => l.provider))].sort();
  }

  /** Unknown values are dropped rather than refused: a stale bookmark still shows a useful page. */
  parse(query: Record<string, unknown>): PricingFilter {
    const str = (v: unknown) => (typeof v === "string" ? v : Array.isArray(v) && typeof v[0] === "string" ? v[0] : "");
    const type = str(query.type);
    const provider = str(query.provider);
    return {
      type: (TYPE_ORDER as string[]).includes(type) ? (type as ModelType) : "",
      provider: this.providers.includes(provider) ? provider : "",
      q: str(query.q).trim().replace(/\s+/g, " ").slice(0, 100),
    };
  }

  filter(f: PricingFilter): Listing[] {
    const terms = f.q.toLowerCase().split(" ").filter(Boolean);
    return this.listings.filter((l) => {
      if (f.type && l.type !== f.type) return false;
      if (f.provider && l.provider !== f.provider) return false;
      const text = `${l.id} ${l.name} ${l.provider} ${l.type} ${l.endpoints.join(" ")} ${l.description}`.toLowerCase();
      return terms.every((t) => text.includes(t));
    });
  }

  respond(query: Record<string, unknown>, ifNoneMatch: string | null): Response {
    const f = this.parse(query);
    const key = `type=${f.type}&provider=${f.provider}&q=${f.q}`; // q as typed: the page shows it back in the search box
    let hit = this.cache.get(key);
    if (!hit) {
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
      hit = { body: this.render(f), etag: `"${this.catalog.version}-${Bun.hash(key).toString(36)}"` };
      this.cache.set(key, hit);
    }
    const headers = { etag: hit.etag, "cache-control": CACHE_CONTROL };
    if (etagMatches(ifNoneMatch, hit.etag)) return new Response(null, { status: 304, headers });
    return new Response(hit.body, { headers: { ...headers, "content-type": "text/html; charset=utf-8" } });
  }

  render(f: PricingFilter): string {
    const shown = this.filter(f);
    const option = (value: string, label: string, selected: boolean) =>
      html`<option value="${value}"${raw(selected ? " selected" : "")}>${label}</option>`;
    const body = html`
<h1>Pricing</h1>
<p>Every model behind one key and one credit wallet, one row each, with its prices in USD and in credits (1 credit =
0.001 USD). LLM tokens bill exactly. Media tasks bill in whole credits: a price per image, clip or request is shown as
the whole credits one such task is charged; a rate per second or per character is exact, and a task's total is rounded
up (<code>POST /v1/credits/estimate</code> gives it before you pay). Every LLM answers on all three LLM endpoints:
natively on the first one listed, translated on the others, at the same price. Open a model for its card: the input
fields, a worked example and ready-to-run requests.</p>
<form id="filters" method="get" action="/pricing" class="card">
  <label>Type <select name="type">${option("", "All types", !f.type)}${TYPE_ORDER.map((t) => option(t, TYPE_LABEL[t], f.type === t))}</select></label>
  <label>Provider <select name="provider">${option("", "All providers", !f.provider)}${this.providers.map((p) => option(p, p, f.provider === p))}</select></label>
  <label>Search <input type="search" name="q" value="${f.q}" placeholder="name, id, endpoint…"></label>
  <button type="submit">Filter</button> <a href="/pricing">Reset</a>
</form>
<div id="results">
<p class="muted" id="count">Showing ${shown.length} of ${this.listings.length} models.</p>
${
  shown.length
    ? TYPE_ORDER.filter((t) => shown.some((l) => l.type === t)).map((t) =>
        typeTable(
          t,
          shown.filter((l) => l.type === t),
        ),
      )
    : html`<p>No model matches these filters. <a href="/pricing">Show all</a>.</p>`
}
</div>
${raw(ENHANCE)}`;
    return layout({ title: "Pricing", head: STYLE }, body);
  }
}

// Token prices in columns: the usual four, and the rest (long prompts, web search) together in the last one.
const TOKEN_COLUMNS = [
  { label: "input", title: "Input" },
  { label: "output", title: "Output" },
  { label: "cache read", title: "Cache read" },
  { label: "cache write", title: "Cache write" },
];

const STYLE = raw(`<style>
main{max-width:1240px}table.pricing .name span code{font-size:12px}
.scroll{overflow-x:auto;max-width:100%;position:relative}table.pricing{margin:.3rem 0 1.5rem}table.pricing td{font-size:14px}
table.pricing .usd{font-variant-numeric:tabular-nums}.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.pricing .name code{overflow-wrap:anywhere}table.pricing .name{min-width:14rem}table.inner td,table.inner th{padding:.15rem .4rem;border:0}
table.pricing div.price{white-space:nowrap}table.pricing td.other div.price{white-space:normal;min-width:10rem}
table.inner{width:100%;table-layout:fixed;min-width:22rem}table.inner td:nth-child(1){width:40%;overflow-wrap:anywhere}table.inner td:nth-child(2){width:34%}#filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
@media (max-width:720px){
table.pricing,table.pricing>tbody,table.pricing>tbody>tr,table.pricing>tbody>tr>td{display:block;width:100%}table.pricing>thead{display:none}
table.pricing>tbody>tr{border-bottom:1px solid var(--line);padding:.5rem 0}table.pricing>tbody>tr>td{border:0;padding:.1rem .2rem}
table.pricing td[data-col]::before{content:attr(data-col) ": ";color:var(--muted)}table.pricing .name{min-width:0}
table.pricing td.other div.price{min-width:0}table.pricing td[data-col] div.price{display:inline}table.inner{display:table;min-width:0}table.inner td{padding:.1rem .3rem .1rem 0}}
</style>`);

/** A price: USD over credits, the unit for screen readers (it is in the column heading). */
const price = (r: PriceRow, visibleLabel = false): Raw =>
  html`<div class="price" data-label="${r.label}">${visibleLabel ? html`<span class="muted">${r.label}:</span> ` : ""}<span class="usd">$${r.usd}</span> · <span class="credits">${r.credits}</span> cr<span class="unit sr"> ${r.unit}</span></div>`;

/** The model's name, id and (where models of a type differ in them) endpoints, the native one first. */
function nameCell(l: Listing, endpoint: boolean): Raw {
  return html`<td class="name"><a href="${cardPath(l.id)}">${l.name}</a>${l.status === "legacy" ? html` <span class="muted">(legacy)</span>` : ""}<br><code class="muted">${l.id}</code>${endpoint ? html`<br><span class="muted">on <code>${l.endpoint}</code>${l.endpoints.slice(1).map((e) => html` · <code>${e}</code>`)}</span>` : ""}</td><td data-col="Provider">${l.provider}</td>`;
}

/** One table per type, one row (a <tbody>, easy to find in tests and scripts) per model. */
function typeTable(type: ModelType, listings: Listing[]): Raw {
  const tokens = type === "llm" || type === "embedding";
  const columns = TOKEN_COLUMNS.filter((c) => listings.some((l) => l.rows.some((r) => r.label === c.label)));
  const head = tokens
    ? html`${columns.map((c) => html`<th>${c.title}<br><span class="muted">per 1M tokens</span></th>`)}<th>Other prices</th>`
    : html`<th>Prices (USD · credits)</th>`;
  const row = (l: Listing) => {
    const cells = tokens
      ? html`${columns.map((c) => html`<td data-col="${c.title} per 1M tokens">${l.rows.filter((r) => r.label === c.label).map((r) => price(r))}</td>`)}<td class="other">${l.rows.filter((r) => !columns.some((c) => c.label === r.label)).map((r) => price(r, true))}</td>`
      : html`<td><table class="inner">${l.rows.map((r) => html`<tr><td class="muted">${r.label === "any" ? "" : r.label}</td><td>${price(r)}</td><td class="muted">${r.unit}</td></tr>`)}</table></td>`;
    return html`<tbody class="model" data-model-id="${l.id}" data-type="${l.type}" data-provider="${l.provider}" data-status="${l.status}"><tr>${nameCell(l, tokens)}${cells}</tr></tbody>`;
  };
  return html`<h2 id="type-${type}">${TYPE_LABEL[type]} <span class="muted">(${listings.length})</span></h2>${tokens ? "" : html`<p class="muted">Tasks on <code>${listings[0]!.endpoint}</code> (or the OpenAI-style route of the type).</p>`}
<div class="scroll"><table class="pricing"><thead><tr><th>Model</th><th>Provider</th>${head}</tr></thead>${listings.map(row)}</table></div>`;
}

/** If-None-Match may list several tags, possibly weak (W/"..."), or be "*". */
export function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const tag = t.trim();
    return tag === "*" || tag.replace(/^W\//, "") === etag;
  });
}

// Progressive enhancement: submit on change, and fetch the filtered page (the same server-side filter, cached)
// to swap the results in place instead of reloading. Without JavaScript the form submits as usual.
const ENHANCE = `<script>
(() => {
  const form = document.getElementById("filters");
  let timer, seq = 0;
  async function refresh() {
    const params = new URLSearchParams([...new FormData(form)].filter(([, v]) => v !== ""));
    const url = "/pricing" + (params.size ? "?" + params : "");
    const mine = ++seq;
    const res = await fetch(url);
    if (!res.ok || mine !== seq) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    document.getElementById("results").replaceWith(doc.getElementById("results"));
    history.replaceState(null, "", url);
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); refresh(); });
  // Selects refresh at once; typing waits for a pause. (A select also fires "input": only text fields debounce.)
  form.addEventListener("change", (e) => { if (e.target.tagName === "SELECT") { clearTimeout(timer); refresh(); } });
  form.addEventListener("input", (e) => { if (e.target.tagName === "INPUT") { clearTimeout(timer); timer = setTimeout(refresh, 200); } });
})();
</script>`;
