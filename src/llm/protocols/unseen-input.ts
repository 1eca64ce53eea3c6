// Input the upstream bills that the request body does not show, for the hold: content the upstream fetches itself
// (an image or PDF by URL or file id, a remote MCP server's results, web_fetch) would otherwise be charged far above
// a hold estimated from the body's size. Allowances, not bounds: a call can still cost more than its hold, but not
// by a whole document. The body's bytes are searched for the part types that could count before anything is parsed.

import { jsonTokens, mentions } from "../request-fields";

export interface UnseenInput {
  /** images the upstream fetches by URL or file id */
  images: number;
  /** a document, file, MCP server or fetch tool: as much input as the context window */
  unbounded: boolean;
}

const NONE: Readonly<UnseenInput> = Object.freeze({ images: 0, unbounded: false });

// A document or file (by reference or inline: a PDF's pages bill as text and as images), a remote MCP server or
// web_fetch holds the model's whole context window. An image by reference holds IMAGE_INPUT_TOKENS (vendors
// resize images, and bill at most a few thousand tokens for one); each held web search (paid-tools.ts) brings
// its results in as input, SEARCH_INPUT_TOKENS.
export const IMAGE_INPUT_TOKENS = 8_000;
export const SEARCH_INPUT_TOKENS = 10_000;

const isObject = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null;
const fetched = (url: unknown) => typeof url === "string" && !url.startsWith("data:");

/**
 * Walks a message list: each element, then what `nested` finds in it (a message's content, a tool result's parts),
 * three levels deep at most, calling `part` on every object.
 */
function overParts(
  messages: unknown,
  nested: (p: Record<string, any>) => unknown,
  part: (p: Record<string, any>, u: UnseenInput) => void,
): UnseenInput {
  const u: UnseenInput = { images: 0, unbounded: false };
  const visit = (list: unknown, depth: number) => {
    if (!Array.isArray(list) || depth > 3) return;
    for (const p of list) {
      if (!isObject(p)) continue;
      part(p, u);
      visit(nested(p), depth + 1);
    }
  };
  visit(messages, 0);
  return u;
}

const ANTHROPIC_PARTS = jsonTokens('"image"', '"document"');
const WEB_FETCH = jsonTokens('"web_fetch');

/** Anthropic Messages: images by URL or Files API id; documents (but plain-text ones); web_fetch; mcp_servers. */
export function anthropicUnseenInput(body: any): UnseenInput {
  const u = !mentions(body, "messages", ANTHROPIC_PARTS)
    ? { ...NONE }
    : overParts(
        body?.messages,
        (p) => p.content,
        (p, u) => {
          const kind = p.source?.type;
          if (p.type === "image" && (kind === "url" || kind === "file")) u.images++;
          else if (p.type === "document" && kind !== "text" && kind !== "content") u.unbounded = true;
        },
      );
  if (Array.isArray(body?.mcp_servers) && body.mcp_servers.length) u.unbounded = true;
  if (
    mentions(body, "tools", WEB_FETCH) &&
    Array.isArray(body?.tools) &&
    body.tools.some((t: any) => typeof t?.type === "string" && t.type.startsWith("web_fetch"))
  ) {
    u.unbounded = true;
  }
  return u;
}

const RESPONSES_PARTS = jsonTokens('"input_image"', '"input_file"', '"item_reference"');
const MCP = jsonTokens('"mcp"');

/**
 * OpenAI Responses: input_image parts by URL or file id, input_file parts however given (also inside function
 * outputs); an item_reference (an item stored upstream, like previous_response_id); mcp tools.
 */
export function responsesUnseenInput(body: any): UnseenInput {
  const u = !mentions(body, "input", RESPONSES_PARTS)
    ? { ...NONE }
    : overParts(
        body?.input,
        (p) => p.content ?? p.output,
        (p, u) => {
          if (p.type === "input_image" && (p.file_id != null || fetched(p.image_url))) u.images++;
          else if (p.type === "input_file") u.unbounded = true;
          else if (p.type === "item_reference") u.unbounded = true;
        },
      );
  if (mentions(body, "tools", MCP) && Array.isArray(body?.tools) && body.tools.some((t: any) => t?.type === "mcp"))
    u.unbounded = true;
  return u;
}

const CHAT_PARTS = jsonTokens('"image_url"', '"file"');

/** Chat Completions: image_url parts with a URL (not a data: URL), file parts (by file id or inline). */
export function chatUnseenInput(body: any): UnseenInput {
  if (!mentions(body, "messages", CHAT_PARTS)) return { ...NONE };
  return overParts(
    body?.messages,
    (p) => p.content,
    (p, u) => {
      if (p.type === "image_url" && fetched(isObject(p.image_url) ? p.image_url.url : p.image_url)) u.images++;
      else if (p.type === "file") u.unbounded = true;
    },
  );
}
