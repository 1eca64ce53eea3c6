import type { Catalog } from "../catalog/service";
import type { ModelType } from "../catalog/model";
import { html, layout, raw, type Raw } from "./layout";
import { cardPath } from "./model-card-facts";
import { allListings, TYPE_LABEL, TYPE_ORDER, type Listing } from "./pricing-data";

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
      const text = `${l.id} ${l.name} ${l.provider} ${l.type} ${l.endpoint} ${l.description}`.toLowerCase();
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
<p>Every model behind one key and one credit wallet, with its price in USD and in credits (1 credit = 0.001 USD), in
the unit it is billed in. LLM tokens bill exactly; media tasks bill in whole credits. Open a model for its card: the
input fields, a worked example and ready-to-run requests.</p>
<form id="filters" method="get" action="/pricing" class="card">
  <label>Type <select name="type">${option("", "All types", !f.type)}${TYPE_ORDER.map((t) => option(t, TYPE_LABEL[t], f.type === t))}</select></label>
  <label>Provider <select name="provider">${option("", "All providers", !f.provider)}${this.providers.map((p) => option(p, p, f.provider === p))}</select></label>
  <label>Search <input type="search" name="q" value="${f.q}" placeholder="name, id, endpoint…"></label>
  <button type="submit">Filter</button> <a href="/pricing">Reset</a>
</form>
<div id="results">
<p class="muted" id="count">Showing ${shown.length} of ${this.listings.length} models.</p>
<table class="pricing">
<thead><tr><th>Model</th><th>Type</th><th>Provider</th><th>Endpoint</th><th>Price for</th><th>USD</th><th>Credits</th><th>Unit</th></tr></thead>
${shown.length ? shown.map(modelRows) : html`<tbody><tr><td colspan="8">No model matches these filters. <a href="/pricing">Show all</a>.</td></tr></tbody>`}
</table>
</div>
${raw(ENHANCE)}`;
    return layout({ title: "Pricing" }, body);
  }
}

/** One <tbody> per model, so a model and its price rows stay together (and are easy to find in tests and scripts). */
function modelRows(l: Listing): Raw {
  const n = l.rows.length;
  return html`<tbody class="model" data-model-id="${l.id}" data-type="${l.type}" data-provider="${l.provider}" data-status="${l.status}">
${l.rows.map((r, i) => html`<tr class="price" data-label="${r.label}">${i === 0 ? html`<td rowspan="${n}"><a href="${cardPath(l.id)}">${l.name}</a>${l.status === "legacy" ? html` <span class="muted">(legacy)</span>` : ""}<br><code class="muted">${l.id}</code></td><td rowspan="${n}">${TYPE_LABEL[l.type]}</td><td rowspan="${n}">${l.provider}</td><td rowspan="${n}"><code>${l.endpoint}</code></td>` : ""}<td>${r.label}</td><td class="usd">$${r.usd}</td><td class="credits">${r.credits}</td><td class="unit">${r.unit}</td></tr>`)}
</tbody>`;
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
