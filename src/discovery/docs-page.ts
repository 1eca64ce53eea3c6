import { Marked } from "marked";
import { escapeHtml, html, layout, raw, type Raw } from "../pages/layout";
import type { FirstCall } from "./first-calls";

// /docs: the human API reference, rendered on the server from the same OpenAPI document as /openapi.json. No
// script and no asset from anywhere else, so it reads the same offline, inside the compiled binary and behind a
// firewall (a bundled UI such as Scalar would fetch fonts and send "try it" calls through its own hosts).

type Json = Record<string, any>;
const METHODS = ["get", "post", "put", "patch", "delete", "head"];
const MAX_DEPTH = 4;
/** An enum longer than this (a media type's model ids) is shown by its first values and its size. */
const ENUM_SHOWN = 6;

// Descriptions are Markdown (backticks, links, lists). Raw HTML in them is shown as text, not markup.
const marked = new Marked({ gfm: true, async: false, renderer: { html: ({ text }) => escapeHtml(text) } });
const md = (text: unknown): Raw => raw(text ? (marked.parse(String(text)) as string) : "");
const mdInline = (text: unknown): Raw => raw(text ? (marked.parseInline(String(text)) as string) : "");

const style = raw(`<style>
.op{border-top:1px solid var(--line);padding:1rem 0}.op h3{margin:.2rem 0;font-size:1.05rem}
.m{display:inline-block;min-width:4.2em;text-align:center;border-radius:4px;padding:0 .4em;font:600 12px/1.8 ui-monospace,monospace;color:#fff;background:#5b6570}
.m.get{background:#2f7d32}.m.post{background:#2454d6}.m.delete{background:#b00020}.m.head{background:#7a5cc4}.m.put,.m.patch{background:#b26a00}
.toc{columns:2 22rem}.toc ul{margin:.2rem 0 .8rem}.auth{font-size:13px}table.fields td:first-child{white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}.op p,.op td{overflow-wrap:anywhere}.op td p{margin:0}h4{margin:.9rem 0 .3rem}
</style>`);

export function renderDocsPage(doc: Json, calls: FirstCall[] = []): string {
  const byTag = new Map<string, Array<{ path: string; method: string; op: Json }>>();
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "Other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push({ path, method, op });
    }
  }
  // Operator-only endpoints last: most readers are API users.
  const tags = [...byTag.keys()].sort((a, b) => Number(a === "Admin") - Number(b === "Admin") || a.localeCompare(b));
  const base = doc.servers?.[0]?.url ?? "";
  const body = html`<h1>${doc.info.title} <span class="muted">${doc.info.version}</span></h1>
${md(doc.info.description)}
<div class="card"><p>Base URL: <code>${base}</code>. Send your key as <code>Authorization: Bearer &lt;key&gt;</code> or
<code>x-api-key: &lt;key&gt;</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1),
<a href="/.well-known/api-catalog">/.well-known/api-catalog</a>. Keys and webhook signatures: <a href="/auth.md">/auth.md</a>.</p></div>
${calls.length ? firstCallSection(calls) : ""}
<nav class="toc">${tags.map(
    (tag) =>
      html`<div><strong>${tag}</strong><ul>${byTag.get(tag)!.map(({ path, method, op }) => html`<li><a href="#${anchor(op, method, path)}">${method.toUpperCase()} ${path}</a></li>`)}</ul></div>`,
  )}</nav>
${tags.map((tag) => html`<h2 id="tag-${slug(tag)}">${tag}</h2>${byTag.get(tag)!.map(({ path, method, op }) => operation(doc, path, method, op))}`)}
<h2 id="errors">Error shapes</h2>
${["Error", "AnthropicError", "EnvelopeError"].map((name) => {
  const s = doc.components.schemas[name];
  return s ? html`<h3>${name}</h3>${md(s.description)}${fields(doc, s)}${example(s.examples?.[0])}` : "";
})}`;
  return layout({ title: "API reference", head: style }, body);
}

function firstCallSection(calls: FirstCall[]): Raw {
  return html`<h2 id="first-call">Your first call</h2>
<p>Create a key in the dashboard (Settings → API Keys) and export it as <code>SWITCHYARD_KEY</code>. One request per protocol:</p>
${calls.map(
  (
    c,
  ) => html`<section class="op" id="first-${slug(c.protocol)}"><h3>${c.protocol} <span class="muted">(${c.model})</span></h3>
<h4>curl</h4><pre>${c.curl}</pre>${c.sdk ? html`<h4>SDK (<code>${c.sdk.package}</code>)</h4><pre>${c.sdk.code}</pre>` : ""}</section>`,
)}`;
}

function operation(doc: Json, path: string, method: string, op: Json): Raw {
  const params: Json[] = op.parameters ?? [];
  const bodySchema =
    op.requestBody?.content?.["application/json"]?.schema ??
    Object.values<Json>(op.requestBody?.content ?? {})[0]?.schema;
  const answers = Object.entries<Json>(op.responses ?? {}).filter(([status]) => status.startsWith("2"));
  return html`<section class="op" id="${anchor(op, method, path)}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${path}</code></h3>
${op.summary ? html`<p>${mdInline(op.summary)}</p>` : ""}${op.description ? html`<div class="muted">${md(op.description)}</div>` : ""}
<p class="auth">${authText(op)}</p>
${
  params.length
    ? html`<h4>Parameters</h4><div class="scroll"><table class="fields"><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Description</th></tr>${params.map(
        (p) =>
          html`<tr><td><code>${p.name}</code></td><td>${p.in}</td><td>${typeOf(doc, p.schema)}</td><td>${p.required ? "yes" : ""}</td><td>${mdInline(p.description ?? p.schema?.description)}</td></tr>`,
      )}</table></div>`
    : ""
}
${bodySchema ? html`<h4>Request body</h4>${schemaView(doc, bodySchema)}${example(resolve(doc, bodySchema).examples?.[0])}` : ""}
<h4>Responses</h4><div class="scroll"><table class="fields"><tr><th>Status</th><th>Description</th><th>Content</th></tr>${Object.entries<Json>(
    op.responses ?? {},
  ).map(
    ([status, r]) =>
      html`<tr><td><code>${status}</code></td><td>${mdInline(r.description)}</td><td>${Object.keys(r.content ?? {}).map((c) => html`<code>${c}</code> `)}${refName(r)}</td></tr>`,
  )}</table></div>
${answers.flatMap(([status, r]) =>
  Object.entries<Json>(r.content ?? {})
    .filter(([, c]) => c.schema && (c.schema.$ref || c.schema.properties || c.schema.oneOf))
    .map(
      ([type, c]) =>
        html`<h4>${type === "text/event-stream" ? "Stream events" : "Response"} <span class="muted">(${status}, ${type})</span></h4>${schemaView(doc, c.schema)}${example(resolve(doc, c.schema).examples?.[0])}`,
    ),
)}
</section>`;
}

/** A schema as field tables: one per variant when it is a oneOf (task creation per media type). */
function schemaView(doc: Json, schema: Json): Raw {
  const variants: Json[] | undefined = resolve(doc, schema).oneOf;
  if (!variants?.every((v) => resolve(doc, v).properties)) return fields(doc, schema);
  return html`<p>One of:</p>${variants.map((v) => html`<p><strong>${v.$ref ? v.$ref.split("/").pop() : "variant"}</strong></p>${fields(doc, v)}`)}`;
}

function authText(op: Json): string {
  const schemes = new Set<string>((op.security ?? []).flatMap((s: Json) => Object.keys(s)));
  if (schemes.has("adminToken")) return "Auth: the operator's admin token (Authorization: Bearer ADMIN_TOKEN).";
  if (schemes.has("bearer") || schemes.has("apiKey")) return "Auth: an API key (Authorization: Bearer or x-api-key).";
  return "Auth: none.";
}

function refName(r: Json): string {
  const ref = Object.values<Json>(r.content ?? {})[0]?.schema?.$ref as string | undefined;
  return ref ? `(${ref.split("/").pop()})` : "";
}

function resolve(doc: Json, s: Json | undefined): Json {
  let cur = s ?? {};
  for (let i = 0; cur.$ref && i < 5; i++) cur = doc.components?.schemas?.[cur.$ref.split("/").pop()] ?? {};
  return cur;
}

function typeOf(doc: Json, schema: Json | undefined): string {
  const s = resolve(doc, schema);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) {
    const shown = s.enum
      .slice(0, ENUM_SHOWN)
      .map((v: unknown) => JSON.stringify(v))
      .join(" | ");
    return s.enum.length > ENUM_SHOWN ? `${shown} | … (${s.enum.length} values)` : shown;
  }
  const union = s.anyOf ?? s.oneOf;
  if (union) return union.map((u: Json) => typeOf(doc, u)).join(" | ");
  if (Array.isArray(s.type)) return s.type.join(" | ");
  if (s.type === "array") return `${typeOf(doc, s.items)}[]`;
  return s.type ?? (s.properties ? "object" : "any");
}

/** A flat table of an object schema's fields, nested fields as dotted names. */
function fields(doc: Json, schema: Json): Raw {
  const rows: Raw[] = [];
  const walk = (s: Json, prefix: string, depth: number) => {
    s = resolve(doc, s);
    if (s.type === "array" && s.items) return walk(s.items, prefix + "[]", depth);
    if (!s.properties || depth > MAX_DEPTH) return;
    const required = new Set<string>(s.required ?? []);
    for (const [name, p] of Object.entries<Json>(s.properties)) {
      const full = prefix ? `${prefix}.${name}` : name;
      rows.push(
        html`<tr><td><code>${full}</code></td><td>${typeOf(doc, p)}</td><td>${required.has(name) ? "yes" : ""}</td><td>${mdInline(resolve(doc, p).description)}</td></tr>`,
      );
      walk(p, full, depth + 1);
    }
  };
  walk(schema, "", 0);
  if (!rows.length) return html`<p class="muted">Type: <code>${typeOf(doc, schema)}</code></p>`;
  return html`<div class="scroll"><table class="fields"><tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th></tr>${rows}</table></div>`;
}

function example(value: unknown): Raw | string {
  return value === undefined
    ? ""
    : html`<details><summary>Example</summary><pre>${JSON.stringify(value, null, 2)}</pre></details>`;
}

function anchor(op: Json, method: string, path: string): string {
  return "op-" + slug(op.operationId ?? `${method}-${path}`);
}

function slug(s: string): string {
  return s
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .toLowerCase();
}
