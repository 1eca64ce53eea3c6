// Reading a chat request's smaller pieces: content text, images, and the fields refused because the target model
// cannot honour them (chat/client.ts says why each is refused or dropped).

import { TranslationError, type ImagePart } from "../ir";

export const isObject = (v: unknown): v is Record<string, any> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A message's content as text: a string, or text (and refusal) parts joined. */
export function textOf(content: unknown, at: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new TranslationError(`${at} must be a string or an array of text parts`, at);
  return content
    .map((p: any, j: number) => {
      if (p?.type === "text" && typeof p.text === "string") return p.text;
      if (p?.type === "refusal" && typeof p.refusal === "string") return p.refusal;
      throw new TranslationError(`${at}[${j}] must be a text part here`, `${at}[${j}]`);
    })
    .join("");
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

export function imagePart(image: unknown, at: string): ImagePart {
  const url = typeof image === "string" ? image : isObject(image) ? image.url : undefined;
  if (typeof url !== "string" || !url)
    throw new TranslationError(`${at}.image_url.url must be a URL or a base64 data URL`, at);
  const data = DATA_URL.exec(url);
  const part: ImagePart = data
    ? { type: "image", source: { kind: "base64", mediaType: data[1]!, data: data[2]! } }
    : /^https?:\/\//i.test(url)
      ? { type: "image", source: { kind: "url", url } }
      : refuse(`${at}.image_url.url must be an http(s) URL or a base64 data URL`, at);
  if (isObject(image) && typeof image.detail === "string") part.detail = image.detail;
  return part;
}

function refuse(message: string, param: string): never {
  throw new TranslationError(message, param);
}

const unsupported = (what: string) => `${what} is not supported for this model`;

/** Fields whose loss would change the answer asked for: each a test of the body and the reason. */
const REFUSED: Array<[field: string, refused: (v: any) => boolean, message: string]> = [
  ["n", (v) => v != null && v !== 1, unsupported("n > 1 (several choices)")],
  ["logprobs", (v) => v === true, unsupported("logprobs")],
  ["top_logprobs", (v) => v != null && v !== 0, unsupported("top_logprobs")],
  ["audio", (v) => v != null, unsupported("audio output")],
  ["modalities", (v) => Array.isArray(v) && v.includes("audio"), unsupported("audio output")],
  ["web_search_options", (v) => v != null, unsupported("web_search_options (web search)")],
  ["prediction", (v) => v != null, unsupported("prediction (predicted outputs)")],
  ["service_tier", (v) => v === "priority", unsupported('service_tier "priority"')],
  ["frequency_penalty", (v) => v != null && v !== 0, unsupported("a non-zero frequency_penalty")],
  ["presence_penalty", (v) => v != null && v !== 0, unsupported("a non-zero presence_penalty")],
  ["logit_bias", (v) => isObject(v) && Object.keys(v).length > 0, unsupported("logit_bias")],
  ["functions", (v) => v != null, unsupported("functions (legacy function calling; use tools)")],
  ["function_call", (v) => v != null, unsupported("function_call (legacy function calling; use tool_choice)")],
];

export function refuseUnsupported(body: Record<string, any>): void {
  for (const [field, refused, message] of REFUSED) {
    if (refused(body[field])) throw new TranslationError(message, field);
  }
}
