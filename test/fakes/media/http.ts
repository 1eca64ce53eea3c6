// Small helpers the fake upstreams share: JSON answers, reading bodies, making a task's result files.
import type { Control, FakeTask } from "./control";
import type { FileStore, OutputKind } from "./files";

export interface FakeContext {
  control: Control;
  files: FileStore;
  /** The key this fake accepts. */
  key: string;
  /** Absolute base of this fake (origin + prefix), for the URLs it hands out. */
  base: string;
}

export type Handler = (req: Request, path: string, body: unknown, ctx: FakeContext) => Promise<Response> | Response;

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** The request body as JSON when it parses, else the raw text (undefined when empty). */
export async function readBody(req: Request): Promise<unknown> {
  const text = await req.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function newId(prefix = ""): string {
  return prefix + crypto.randomUUID().replaceAll("-", "");
}

function num(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && /^\d+(\.\d+)?s?$/.test(v)) return Number.parseFloat(v); // "5", "8s"
  return undefined;
}

export interface Produced {
  kind: OutputKind;
  ids: string[];
  seconds: number;
}

/** The result files of a successful task, made once: count and length from the behaviour, else from the input. */
export function produce(
  ctx: FakeContext,
  t: FakeTask,
  input: Record<string, unknown>,
  defaults: { count?: number; seconds?: number } = {},
): Produced {
  const kind = ctx.control.outputOf(t);
  const b = t.behavior;
  const seconds =
    b.seconds ??
    num(input.duration) ??
    num(input.durationSeconds) ??
    num(input.duration_seconds) ??
    defaults.seconds ??
    (kind === "video" ? 5 : 10);
  const asked = kind === "image" ? (num(input.num_images) ?? num(input.n) ?? num(input.num_outputs)) : undefined;
  const count = b.count ?? asked ?? defaults.count ?? 1;
  const make = (i: number) =>
    b.missingFiles?.includes(i)
      ? `missing${i}` // never stored: its download answers 404
      : b.file
        ? ctx.files.putRaw(b.file.body, b.file.contentType, b.file.chunked)
        : ctx.files.put(kind, seconds, b.fileDelayMs);
  t.files ??= Array.from({ length: count }, (_, i) => make(i));
  return { kind, ids: t.files, seconds };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
