import { readFileSync } from "node:fs";
import builtinLlm from "./models.json";
import builtinMedia from "./media-models.json";
import type { LlmEntry, LlmModel } from "./model";
import type { MediaModel } from "../media/model";
import { compileLlm } from "./compile-llm";
import {
  checkSuccessors,
  FieldError,
  LIFECYCLE_KEYS,
  lifecycleOf,
  pastLastDay,
  retiredError,
  utcDay,
  type Lifecycle,
  type ModelStatus,
} from "./lifecycle";
import { publicLlm, publicMedia } from "./public";

// The catalog: every model the gateway sells, loaded and checked once at startup. A bad entry stops startup with a
// message naming it, so a price typo never reaches a customer. Lookups on the hot path are one Map.get. The catalog
// hands media entries as data to the compiler it is given (the media module's: src/catalog-loader.ts).

/** Checks a media entry and compiles it (its input schema, its prices); throws naming what is wrong. */
export type MediaCompiler = (entry: unknown) => MediaModel;

export class CatalogError extends Error {}

export class Catalog {
  readonly llm = new Map<string, LlmModel>(); // by id and alias
  readonly media = new Map<string, MediaModel>();
  readonly llmList: LlmModel[] = [];
  readonly mediaList: MediaModel[] = [];
  /** A fingerprint of the loaded data and of the models retired since (for ETags of pages rendered from it). */
  get version(): string {
    this.retireExpired();
    return this.retiredSince ? `${this.dataVersion}.${this.retiredSince}` : this.dataVersion;
  }
  private readonly dataVersion: string;
  /** models retired by `retireExpired` since loading */
  private retiredSince = 0;
  /** when the next UTC day starts: until then `retireExpired` has nothing to do */
  private nextDayAt = 0;

  /** status, dates, successor and source of every model, by id */
  readonly lifecycle = new Map<string, Lifecycle & { status: ModelStatus }>();

  /** `originOf` names the file an entry came from, for the one-line startup error. */
  constructor(
    llmEntries: LlmEntry[],
    mediaEntries: unknown[],
    compileMedia: MediaCompiler,
    originOf: (entry: unknown) => string = () => "built-in catalog",
    /** the clock lifecycles and holiday lists are judged by (CATALOG_DAY pins it) */
    readonly now: () => number = Date.now,
  ) {
    const fail = (entry: unknown, e: Error): never => {
      const field = e instanceof FieldError ? `, field ${e.field}` : "";
      throw new CatalogError(`${originOf(entry)}: entry ${JSON.stringify((entry as any)?.id)}${field}: ${e.message}`);
    };
    const byId = new Map<string, unknown>();
    for (const e of llmEntries) {
      let m: LlmModel;
      try {
        m = compileLlm(e);
        this.lifecycle.set(m.id, lifecycleOf(e as any));
      } catch (err) {
        fail(e, err as Error);
      }
      this.llmList.push(m!);
      byId.set(m!.id, e);
      for (const name of [m!.id, ...(m!.aliases ?? [])]) {
        // An alias equal to another model's id (or alias) would silently take that name over: refuse at startup.
        if (this.llm.has(name))
          fail(
            e,
            new FieldError(
              name === m!.id ? "id" : "aliases",
              `${JSON.stringify(name)} already names ${this.llm.get(name)!.id}`,
            ),
          );
        this.llm.set(name, m!);
      }
    }
    for (const e of mediaEntries) {
      let m: MediaModel;
      const { lifecycle, rest } = splitLifecycle(e);
      try {
        m = compileMedia(rest);
        this.lifecycle.set(m.id, lifecycleOf(lifecycle));
      } catch (err) {
        fail(e, err as Error);
      }
      if (this.llm.has(m!.id) || this.media.has(m!.id)) fail(e, new FieldError("id", "duplicate id"));
      this.mediaList.push(m!);
      this.media.set(m!.id, m!);
      byId.set(m!.id, e);
    }
    checkSuccessors(this.lifecycle, (id, err) => fail(byId.get(id), err));
    this.dataVersion = new Bun.CryptoHasher("sha1")
      .update(JSON.stringify([llmEntries, mediaEntries]))
      .digest("hex")
      .slice(0, 16);
  }

  /** A media model by id; a unique "vendor/" suffix match is accepted too ("seedance-2-fast" → "bytedance/seedance-2-fast"). */
  findMedia(id: unknown): MediaModel | undefined {
    if (typeof id !== "string" || !id) return undefined;
    const exact = this.media.get(id);
    if (exact) return exact;
    const hits = this.mediaList.filter((m) => m.id.endsWith("/" + id));
    return hits.length === 1 ? hits[0] : undefined;
  }

  /** The model list of GET /v1/models (OpenAI list shape plus our fields). */
  publicList(): object[] {
    this.retireExpired();
    const life = (id: string) => this.lifecycle.get(id)!;
    return [
      ...this.llmList.map((m) => publicLlm(m, life(m.id))),
      ...this.mediaList.map((m) => publicMedia(m, life(m.id))),
    ];
  }

  publicModel(id: string): object | undefined {
    this.retireExpired();
    const l = this.llm.get(id);
    if (l) return publicLlm(l, this.lifecycle.get(l.id)!);
    const m = this.media.get(id);
    return m && publicMedia(m, this.lifecycle.get(m.id)!);
  }

  /** Refuses a model its provider retired (410 model_retired naming the successor); call it wherever a request picks a model. */
  servable(model: { id: string }): void {
    this.retireExpired();
    const life = this.lifecycle.get(model.id);
    if (life?.status === "retired") throw retiredError(model.id, { ...life, successor: this.liveSuccessor(life) });
  }

  /** The first model down the successor chain still served (a successor may have been retired since loading). */
  private liveSuccessor(life: Lifecycle): string | undefined {
    const seen = new Set<string>();
    for (let id = life.successor; id && !seen.has(id); id = this.lifecycle.get(id)?.successor) {
      seen.add(id);
      if (this.lifecycle.get(id)?.status !== "retired") return id;
    }
    return life.successor;
  }

  /** A value built from the catalog (a page, a list), built again once the catalog has changed since (`version`). */
  derived<T>(build: () => T): () => T {
    let builtFor: string | undefined;
    let value: T;
    return () => {
      const now = this.version;
      if (now !== builtFor) [value, builtFor] = [build(), now];
      return value;
    };
  }

  /**
   * Retires each legacy model whose provider's last day of service (`retires_after`) has passed, so a gateway that runs
   * past that day answers 410 naming the successor instead of forwarding to an upstream id that no longer exists.
   * One comparison until the next UTC midnight.
   */
  retireExpired(): void {
    const now = this.now();
    if (now < this.nextDayAt) return;
    const day = utcDay(now);
    this.nextDayAt = Date.parse(day) + 86_400_000;
    for (const life of this.lifecycle.values()) {
      if (life.status !== "legacy" || !pastLastDay(life, day)) continue; // an operator's "current" keeps it served
      life.status = "retired";
      this.retiredSince++;
    }
  }
}

/** The lifecycle fields of a media entry apart from the rest (which media/model.ts checks key by key). */
function splitLifecycle(e: unknown): { lifecycle: Record<string, unknown>; rest: unknown } {
  if (typeof e !== "object" || e === null) return { lifecycle: {}, rest: e };
  const lifecycle: Record<string, unknown> = {};
  const rest: Record<string, unknown> = { ...(e as object) };
  for (const k of LIFECYCLE_KEYS) if (k in rest) (lifecycle[k] = rest[k]), delete rest[k];
  return { lifecycle, rest };
}

/**
 * Built-in data merged with the operator's CATALOG_PATH file: a new id adds a model, a whole entry (with `type`)
 * replaces the built-in one, and an entry of only an id and lifecycle fields amends the built-in one in place, so
 * `{"id": "gpt-4o", "status": "retired", "successor": "gpt-5.1"}` retires a model without restating it.
 */
export function buildCatalog(
  overridePath: string | undefined,
  compileMedia: MediaCompiler,
  now: () => number = Date.now,
): Catalog {
  const origin = new WeakMap<object, string>();
  const builtin = (entries: any[], file: string) =>
    entries.map((e) => (origin.set(e, file), [e.id, e] as [string, any]));
  const llm = new Map<string, any>(builtin(builtinLlm as any[], "src/catalog/models.json"));
  const media = new Map<string, any>(builtin(builtinMedia as any[], "src/catalog/media-models.json"));
  if (overridePath) {
    const where = `CATALOG_PATH ${overridePath}`;
    let extra: unknown;
    try {
      extra = JSON.parse(readFileSync(overridePath, "utf8"));
    } catch (err) {
      throw new CatalogError(`${where}: ${(err as Error).message}`);
    }
    if (!Array.isArray(extra)) throw new CatalogError(`${where}: must hold a JSON array of model entries`);
    const seen = new Set<unknown>();
    for (let e of extra as any[]) {
      if (typeof e !== "object" || e === null) throw new CatalogError(`${where}: every entry must be an object`);
      if (seen.has(e.id))
        throw new CatalogError(
          `${where}: entry ${JSON.stringify(e.id)}, field id: duplicate id (the file lists it twice)`,
        );
      seen.add(e.id);
      const amends = Object.keys(e).every((k) => k === "id" || (LIFECYCLE_KEYS as readonly string[]).includes(k));
      const known = llm.get(e.id) ?? media.get(e.id);
      if (amends && known) e = { ...known, ...e };
      origin.set(e, where);
      const isLlm = amends && known ? llm.has(e.id) : e.type === "llm" || e.type === "embedding";
      (isLlm ? llm : media).set(e.id, e);
      (isLlm ? media : llm).delete(e.id);
    }
  }
  return new Catalog(
    [...llm.values()],
    [...media.values()],
    compileMedia,
    (e) => (typeof e === "object" && e !== null && origin.get(e)) || "catalog",
    now,
  );
}
