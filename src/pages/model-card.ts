import { html, layout, raw, type Raw } from "./layout";
import { curlText, type ExampleRequest } from "./model-card-examples";
import { cardPath, type CardFacts, type InputField } from "./model-card-facts";
import { creditsText, TYPE_LABEL, usdText } from "./pricing-data";

// The HTML model card. Everything on it comes from CardFacts (model-card-facts.ts), the same object
// GET /v1/models/{id} answers with; this file only lays it out.

export const PROTOCOL: Record<string, string> = {
  "/v1/messages": "Anthropic Messages",
  "/v1/responses": "OpenAI Responses",
  "/v1/chat/completions": "OpenAI Chat Completions",
  "/v1/embeddings": "OpenAI Embeddings",
  "/api/v1/jobs/createTask": "Switchyard task API (asynchronous)",
};

/** What a card says that comes from the gateway's settings rather than the catalog. */
export interface CardSettings {
  /** RESULT_RETENTION_DAYS */
  resultRetentionDays: number;
}

export function renderCard(f: CardFacts, baseUrl: string, settings: CardSettings): string {
  const l = f.listing;
  const m = f.ref.model as any;
  const facts: Array<[string, unknown]> = [
    ["ID", html`<code>${l.id}</code>`],
    ["Type", TYPE_LABEL[l.type]],
    ["Provider", l.provider],
    ["Endpoint", html`<code>POST ${l.endpoint}</code> · ${PROTOCOL[l.endpoint] ?? ""}`],
  ];
  if (l.endpoints.length > 1)
    facts.push([
      "Also on (translated)",
      html`${l.endpoints.slice(1).map((e, i) => html`${i ? ", " : ""}<code>POST ${e}</code>`)}`,
    ]);
  facts.push(...lifecycleFacts(f.json));
  if (f.ref.kind === "llm") {
    if (m.aliases?.length)
      facts.push([
        "Aliases",
        html`${m.aliases.map((a: string, i: number) => html`${i ? ", " : ""}<code>${a}</code>`)}`,
      ]);
    if (m.context_window) facts.push(["Context window", `${m.context_window.toLocaleString("en-US")} tokens`]);
    if (m.max_output_tokens) facts.push(["Max output", `${m.max_output_tokens.toLocaleString("en-US")} tokens`]);
    if (m.capabilities?.length) facts.push(["Capabilities", m.capabilities.join(", ")]);
  } else {
    facts.push(["Kind", m.kind]);
  }
  const body = html`
<p class="muted"><a href="/pricing">Pricing</a> › ${TYPE_LABEL[l.type]}</p>
<h1>${l.name}</h1>
<p>${l.description}</p>
<table class="facts">${facts.map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</table>
<h2 id="pricing">Price</h2>
${priceTable(f)}
${f.json.status === "retired" ? retiredSection(f) : f.ref.kind === "llm" ? llmSections(f, baseUrl) : mediaSections(f, baseUrl, settings)}
<p class="muted">Also as JSON: <a href="/v1/models/${raw(f.cardPath.slice("/models/".length))}"><code>GET /v1/models/${l.id}</code></a></p>`;
  return layout({ title: l.name }, body);
}

/** Status, dates, successor, and where the prices were read and when (the same fields GET /v1/models/{id} has). */
function lifecycleFacts(j: Record<string, any>): Array<[string, unknown]> {
  const dates = [j.released && `released ${j.released}`, j.retires_after && `retires after ${j.retires_after}`]
    .filter(Boolean)
    .join(", ");
  const status: Array<[string, unknown]> = [
    ["Status", html`<span class="status">${j.status}</span>${dates ? ` (${dates})` : ""}`],
  ];
  if (j.successor) status.push(["Successor", html`<a href="${cardPath(j.successor)}"><code>${j.successor}</code></a>`]);
  if (j.provider_successor)
    status.push(["Provider's replacement", html`<code>${j.provider_successor}</code> (not sold here)`]);
  const checked = j.source
    ? html`<span class="checked">${j.checked ?? "date unknown"}</span>, against <a class="source" href="${j.source}">${new URL(j.source).hostname}</a>`
    : html`<span class="checked">not re-checked against the provider's pages</span>`;
  status.push(["Prices checked", checked]);
  return status;
}

function priceTable(f: CardFacts): Raw {
  return html`<table class="prices"><thead><tr><th>Price for</th><th>USD</th><th>Credits</th><th>Unit</th></tr></thead><tbody>
${f.listing.rows.map((r) => html`<tr class="price" data-label="${r.label}"><td>${r.label}</td><td class="usd">$${r.usd}</td><td class="credits">${r.credits}</td><td class="unit">${r.unit}</td></tr>`)}
</tbody></table>
${f.listing.note ? html`<p class="peak-note">${f.listing.note}</p>` : ""}
<p class="muted">1 credit = 0.001 USD.</p>`;
}

/** A retired model is not served: a request to copy would only earn a 410, so the card says that instead. */
function retiredSection(f: CardFacts): Raw {
  const successor = f.json.successor as string;
  const theirs = f.json.provider_successor as string | null;
  return html`
<h2 id="call">No longer served</h2>
<p class="retired-notice">The provider retired this model: a call naming <code>${f.listing.id}</code> answers
<code>410 model_retired</code>, before anything is held or sent. Use
<a href="${cardPath(successor)}"><code>${successor}</code></a> instead${theirs ? html` (the provider's own replacement, <code>${theirs}</code>, is not sold here)` : ""}.</p>`;
}

function llmSections(f: CardFacts, baseUrl: string): Raw {
  const w = f.worked!;
  const ex = f.llm!;
  const cachedNote = f.listing.rows.some((r) => r.label.startsWith("cache"))
    ? html` Cached prompt tokens bill at the cache prices above.`
    : html` Cached prompt tokens, if any, bill at the input price.`;
  return html`
<p class="worked" data-micros="${w.micros}">Worked example: <strong>${w.text}</strong>.${cachedNote} A hold for
<code>max_tokens</code> is placed before the call and settled to the real usage after it.</p>
<h2 id="call">Call it</h2>
<p>Served on <code>POST ${f.listing.endpoint}</code>, speaking the ${PROTOCOL[f.listing.endpoint]} protocol. Authenticate with your
Switchyard key; never put it in browser or mobile code.</p>
${
  f.listing.endpoints.length > 1
    ? html`<p>Also served on ${f.listing.endpoints.slice(1).map((e, i) => html`${i ? " and " : ""}<code>POST ${e}</code> (${PROTOCOL[e]})`)}: the
request and the answer are translated, and the call costs the same, metered from the provider's own usage.</p>`
    : ""
}
${examplesScript({ request: ex.request })}
<pre class="curl" data-example="request">${curlText(ex.request, baseUrl)}</pre>
<p>With the official SDK (<code>${ex.sdk.package}</code>):</p>
<pre class="sdk">${ex.sdk.code}</pre>`;
}

function mediaSections(f: CardFacts, baseUrl: string, settings: CardSettings): Raw {
  const ex = f.media!;
  const credits = creditsText(ex.estimateMicros);
  return html`
<p class="worked" data-micros="${ex.estimateMicros}">Worked example: the sample input below is estimated at
<strong><span class="estimate-credits">${credits}</span> credits (${usdText(ex.estimateMicros)} USD)</strong>. Media tasks are billed in whole
credits: a hold for the estimate is placed when the task is created, settled to the real output when it finishes,
and refunded in full if it fails.</p>
<h2 id="input">Input fields</h2>
${fieldTable(f.fields!)}
<h2 id="call">Call it</h2>
${examplesScript({ native: ex.native, alias: ex.alias, estimate: ex.estimate, estimated_credits: ex.estimateMicros / 1_000_000 })}
<p>1. Check the price first (no charge): the answer is <strong>${credits} credits</strong>.</p>
<pre class="curl" data-example="estimate">${curlText(ex.estimate, baseUrl)}</pre>
<p>2. Create the task with the native task API (add <code>"callBackUrl"</code> to be called when it finishes):</p>
<pre class="curl" data-example="native">${curlText(ex.native, baseUrl)}</pre>
<p>Or with the OpenAI-style alias, where the input fields sit beside <code>model</code>, <code>max_credits</code> rejects the
task before it is created if it would cost more, and <code>callback_url</code> sets the callback:</p>
<pre class="curl" data-example="alias">${curlText(ex.alias, baseUrl)}</pre>
<p>3. Poll <code>GET /api/v1/jobs/recordInfo?taskId=…</code> (or <code>GET /v1/tasks/{task_id}</code>) until <code>state</code> is
<code>success</code> or <code>fail</code>. Result files are kept for ${daysText(settings.resultRetentionDays)}.</p>`;
}

const daysText = (days: number) => `${days.toLocaleString("en-US")} ${days === 1 ? "day" : "days"}`;

function fieldTable(fields: InputField[]): Raw {
  return html`<table class="fields"><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Allowed</th><th>Default</th><th>Description</th></tr></thead><tbody>
${fields.map((x) => html`<tr class="field" data-field="${x.name}"><td><code>${x.name}</code></td><td>${x.type}</td><td>${x.required ? "yes" : "no"}</td><td>${allowed(x)}</td><td>${x.default === undefined ? "—" : html`<code>${JSON.stringify(x.default)}</code>`}</td><td>${x.description}</td></tr>`)}
</tbody></table>`;
}

function allowed(x: InputField): Raw | string {
  const parts: Raw[] = [];
  if (x.allowed) parts.push(html`${x.allowed.map((v, i) => html`${i ? ", " : ""}<code>${JSON.stringify(v)}</code>`)}`);
  if (x.range) parts.push(html`${parts.length ? "; " : ""}${x.range}`);
  return parts.length ? html`${parts}` : "any";
}

/**
 * The example requests as JSON, for programs and the acceptance test: the very objects the curl text above is made
 * from. `<` is escaped so no value can close the script element.
 */
function examplesScript(data: Record<string, ExampleRequest | number>): Raw {
  return raw(
    `<script type="application/json" id="card-examples">${JSON.stringify(data).replaceAll("<", "\\u003c")}</script>`,
  );
}

export function renderNotFound(id: string): string {
  return layout(
    { title: "Model not found" },
    html`<h1>Model not found</h1><p>There is no model <code>${id}</code>. See <a href="/pricing">every model and its price</a>, or
<a href="/v1/models"><code>GET /v1/models</code></a>.</p>`,
  );
}
