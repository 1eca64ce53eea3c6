// Reads the rendered pages the way a test needs them, with Bun's HTMLRewriter (a real HTML parser), so the tests
// check what is on the page rather than calling the page code.

export interface ShownRow {
  label: string;
  usd: string;
  credits: string;
  unit: string;
}
export interface ShownModel {
  id: string;
  type: string;
  provider: string;
  rows: ShownRow[];
  href?: string;
}

/** Text of an element as a browser shows it: entities decoded, tags dropped. */
function decode(s: string): string {
  return s.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, e) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e as string]!,
  );
}

/** Collect the text of every element matched by `selector`, in document order. */
export async function texts(page: string, selector: string): Promise<string[]> {
  const out: string[] = [];
  await new HTMLRewriter()
    .on(selector, {
      element() {
        out.push("");
      },
      text(t) {
        out[out.length - 1] += t.text;
      },
    })
    .transform(new Response(page))
    .text();
  return out.map((s) => decode(s).trim());
}

/** Attribute values of every element matched by `selector`. */
export async function attrs(page: string, selector: string, name: string): Promise<string[]> {
  const out: string[] = [];
  await new HTMLRewriter()
    .on(selector, {
      element(e) {
        out.push(e.getAttribute(name) ?? "");
      },
    })
    .transform(new Response(page))
    .text();
  return out;
}

/** The models of the pricing page: one <tbody class="model"> each, with its prices (`.price`: `.usd`, `.credits`, `.unit`). */
export async function pricingModels(page: string): Promise<ShownModel[]> {
  const models: ShownModel[] = [];
  let row: ShownRow | undefined;
  await new HTMLRewriter()
    .on("tbody.model", {
      element(e) {
        models.push({
          id: e.getAttribute("data-model-id")!,
          type: e.getAttribute("data-type")!,
          provider: e.getAttribute("data-provider")!,
          rows: [],
        });
      },
    })
    .on("tbody.model a", {
      element(e) {
        models.at(-1)!.href ??= e.getAttribute("href")!;
      },
    })
    .on(".price", {
      element(e) {
        row = { label: e.getAttribute("data-label")!, usd: "", credits: "", unit: "" };
        models.at(-1)!.rows.push(row);
      },
    })
    .on(".price .usd", {
      text(t) {
        row!.usd += t.text;
      },
    })
    .on(".price .credits", {
      text(t) {
        row!.credits += t.text;
      },
    })
    .on(".price .unit", {
      text(t) {
        row!.unit += t.text;
      },
    })
    .transform(new Response(page))
    .text();
  for (const m of models)
    for (const r of m.rows) for (const k of ["usd", "credits", "unit"] as const) r[k] = decode(r[k]).trim();
  return models;
}

/** The price rows of a model card. */
export async function cardRows(page: string): Promise<ShownRow[]> {
  const wrapped = page.replace(
    '<table class="prices">',
    '<table class="prices"><tbody class="model" data-model-id="card">',
  );
  return (await pricingModels(wrapped)).flatMap((m) => m.rows);
}

/** The JSON block of a card's example requests (the objects its curl text is made from). */
export async function cardExamples(page: string): Promise<any> {
  const [json] = await texts(page, "script#card-examples");
  return JSON.parse(json!);
}

/** "$3.00" → 3, "3,000" → 3000, as exact numbers for comparison with catalog data. */
export const num = (s: string) => Number(s.replace(/[$,]/g, ""));
