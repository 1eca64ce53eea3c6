import type { LlmModel } from "../catalog/model";
import { TASK_ENDPOINT } from "../catalog/model";
import type { InputSchema, MediaModel, PropertyDef } from "../media/model";
import { chatMaxTokensField } from "../llm/providers";
import { creditsNumber } from "./pricing-data";

// The example requests of a model card. The page's curl text, its SDK snippet, the JSON of GET /v1/models/{id} and
// the acceptance test are all made from the objects built here, so what a reader copies is what the test posts.

export interface ExampleRequest {
  method: "POST";
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface MediaExamples {
  /** The sample input: required fields with example values, then every default the validator would apply. */
  input: Record<string, unknown>;
  /** What the sample input is estimated to cost, in µcr (whole credits: media tasks bill in whole credits). */
  estimateMicros: number;
  native: ExampleRequest;
  alias: ExampleRequest;
  estimate: ExampleRequest;
}

const KEY_HEADER = { authorization: "Bearer $SWITCHYARD_KEY", "content-type": "application/json" };
export const ALIAS_PATH = {
  image: "/v1/images/generations",
  video: "/v1/videos",
  audio: "/v1/music/generations",
} as const;

/**
 * The sample input of a media model, from its input definition alone. Required fields get an example value that
 * satisfies their constraints; fields with a default are spelled out with it, so the reader sees what the price
 * depends on (duration, resolution, …). Optional fields without a default are left out.
 */
export function sampleInput(def: InputSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(def.properties)) {
    if (def.required.includes(name)) out[name] = p.default !== undefined ? p.default : exampleValue(name, p);
    else if (p.default !== undefined) out[name] = p.default;
  }
  return out;
}

function exampleValue(name: string, p: PropertyDef): unknown {
  if (p.enum) return p.enum[0];
  switch (p.type) {
    case "boolean":
      return false;
    case "integer":
    case "number":
      // The smallest allowed value: valid by construction and the cheapest when the field drives the price.
      return p.minimum ?? (p.maximum !== undefined && p.maximum < 1 ? p.maximum : 1);
    case "url":
      return exampleUrl(name);
    case "array": {
      const n = Math.max(p.minItems ?? 1, 1);
      return Array.from({ length: n }, (_, i) => ((p.items ?? "url") === "url" ? exampleUrl(name, i) : "example"));
    }
    default:
      return fitLength(exampleText(`${name} ${p.description}`), p);
  }
}

// Public placeholder files; a reader swaps in their own. The gateway passes URLs through to the upstream.
function exampleUrl(name: string, i = 0): string {
  const n = i ? `-${i + 1}` : "";
  if (/video/i.test(name)) return `https://example.com/input${n}.mp4`;
  if (/audio|voice/i.test(name)) return `https://example.com/input${n}.mp3`;
  if (/mask/i.test(name)) return `https://example.com/mask${n}.png`;
  return `https://example.com/input${n}.png`;
}

// Matched against "<name> <description>", first match wins.
const TEXTS: Array<[RegExp, string]> = [
  [/negative/i, "blurry, low quality"],
  [/of the sound|sound effect/i, "Footsteps crunching on fresh snow, a soft wind"],
  [/prompt/i, "A red fox running through fresh snow at sunrise, soft golden light"],
  [/^text |lyrics|script/i, "Welcome to Switchyard: one key and one wallet for every model."],
  [/title/i, "Morning Run"],
  [/style|tags/i, "lo-fi hip hop, warm piano"],
  [/voice/i, "Rachel"],
];

function exampleText(nameAndDescription: string): string {
  return TEXTS.find(([re]) => re.test(nameAndDescription))?.[1] ?? "example";
}

function fitLength(s: string, p: PropertyDef): string {
  let v = s;
  if (p.minLength !== undefined) while ([...v].length < p.minLength) v += " " + s;
  if (p.maxLength !== undefined) v = [...v].slice(0, p.maxLength).join("");
  return v;
}

/** The native task call, the alias call and the estimate call for the sample input, with the price they state. */
export function mediaExamples(m: MediaModel): MediaExamples {
  const input = sampleInput(m.input);
  const prepared = m.prepare(input);
  // A sample the model's own validator or price rule refuses is a catalog bug; the card test catches it for every model.
  if (!prepared.ok) throw new Error(`sample input of ${m.id} is refused: ${prepared.message}`);
  const credits = creditsNumber(prepared.estimate);
  return {
    input,
    estimateMicros: prepared.estimate,
    native: { method: "POST", path: TASK_ENDPOINT, headers: KEY_HEADER, body: { model: m.id, input } },
    // The alias endpoints take the input fields beside `model`; max_credits guards the budget at the stated price.
    alias: {
      method: "POST",
      path: ALIAS_PATH[m.type],
      headers: KEY_HEADER,
      body: { model: m.id, ...input, max_credits: credits },
    },
    estimate: {
      method: "POST",
      path: "/v1/credits/estimate",
      headers: KEY_HEADER,
      body: { model: m.id, ...input, max_credits: credits },
    },
  };
}

export interface LlmExample {
  request: ExampleRequest;
  /** A minimal TypeScript SDK call for the model's protocol. */
  sdk: { package: string; code: string };
}

// Every example caps its output: the hold covers the output cap, and without one the model's whole maximum output
// (128,000 tokens of a large model) is more than the quickstart's 1,000 credits, so the call would answer 402.
const EXAMPLE_MAX_TOKENS = 1024;

export function llmExample(m: LlmModel, baseUrl: string): LlmExample {
  const hello = "Say hello in one short sentence.";
  switch (m.endpoint) {
    case "/v1/messages":
      return {
        request: {
          method: "POST",
          path: m.endpoint,
          headers: {
            "x-api-key": "$SWITCHYARD_KEY",
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
          },
          body: { model: m.id, max_tokens: EXAMPLE_MAX_TOKENS, messages: [{ role: "user", content: hello }] },
        },
        sdk: {
          package: "@anthropic-ai/sdk",
          // The Anthropic SDK appends /v1/messages itself, so its baseURL is the bare gateway address.
          code: `import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ baseURL: ${JSON.stringify(baseUrl)}, apiKey: process.env.SWITCHYARD_KEY });
const message = await client.messages.create({
  model: ${JSON.stringify(m.id)},
  max_tokens: ${EXAMPLE_MAX_TOKENS},
  messages: [{ role: "user", content: ${JSON.stringify(hello)} }],
});
console.log(message.content);`,
        },
      };
    case "/v1/embeddings":
      return openaiExample(
        m,
        baseUrl,
        { model: m.id, input: hello },
        `client.embeddings.create({ model: ${JSON.stringify(m.id)}, input: ${JSON.stringify(hello)} })`,
        "result.data[0].embedding.length",
      );
    case "/v1/chat/completions": {
      // Passed through as written, so in the field the model's provider takes (OpenAI refuses max_tokens for GPT-5).
      const field = chatMaxTokensField(m.provider);
      return openaiExample(
        m,
        baseUrl,
        { model: m.id, [field]: EXAMPLE_MAX_TOKENS, messages: [{ role: "user", content: hello }] },
        `client.chat.completions.create({\n  model: ${JSON.stringify(m.id)},\n  ${field}: ${EXAMPLE_MAX_TOKENS},\n  messages: [{ role: "user", content: ${JSON.stringify(hello)} }],\n})`,
        "result.choices[0].message.content",
      );
    }
    default:
      return openaiExample(
        m,
        baseUrl,
        { model: m.id, max_output_tokens: EXAMPLE_MAX_TOKENS, input: hello },
        `client.responses.create({ model: ${JSON.stringify(m.id)}, max_output_tokens: ${EXAMPLE_MAX_TOKENS}, input: ${JSON.stringify(hello)} })`,
        "result.output_text",
      );
  }
}

function openaiExample(
  m: LlmModel,
  baseUrl: string,
  body: Record<string, unknown>,
  call: string,
  show: string,
): LlmExample {
  return {
    request: { method: "POST", path: m.endpoint, headers: KEY_HEADER, body },
    sdk: {
      package: "openai",
      // The openai SDK appends the path after /v1, so its baseURL includes it.
      code: `import OpenAI from "openai";

const client = new OpenAI({ baseURL: ${JSON.stringify(baseUrl + "/v1")}, apiKey: process.env.SWITCHYARD_KEY });
const result = await ${call};
console.log(${show});`,
    },
  };
}

/** The request as a curl command: the same object, so copying it sends exactly what the card describes. */
export function curlText(req: ExampleRequest, baseUrl: string): string {
  const headers = Object.entries(req.headers).map(([k, v]) => `  -H "${k}: ${v}"`);
  const json = JSON.stringify(req.body, null, 2).replaceAll("'", "'\\''");
  return [`curl -s ${baseUrl}${req.path}`, ...headers, `  -d '${json}'`].join(" \\\n");
}
