// What every fake upstream shares: per-test behaviour, the tasks it accepted, the requests and callbacks it saw.
//
//   control.set({ polls: 3 })                                  every task: 3 "still working" answers, then done
//   control.set({ fail: { message: "nsfw" } }, { provider: "fal" })   fal tasks fail during generation
//   control.once({ refuse: { code: 429, message: "busy" } })  only the next submission (any upstream) is refused
//   control.set({ never: true }, { model: "kling-3.0/video" }) that model never finishes (deadline tests)
//   control.update(taskId, { never: false, polls: 0 })         let a stuck task finish at its next poll
//
// Precedence: a matching `once` (oldest first), then model rules, then provider rules, then global rules; the fields
// of all matching rules are merged, the more specific winning. A task keeps the behaviour it was submitted with.
import catalog from "../../../src/catalog/media-models.json";
import type { OutputKind } from "./files";

export type Provider = "kie" | "kie-suno" | "fal" | "replicate" | "openai-images" | "veo";

export interface Behavior {
  /** "Still working" answers before the final one (default 1). Ignored when delayMs is set. */
  polls?: number;
  /** Final once this many ms have passed since submission (also fires callbacks/webhooks at that moment). */
  delayMs?: number;
  /** Never reaches a final state. */
  never?: boolean;
  /** Refuse the submission: HTTP status (kie: envelope code, HTTP 200 unless status is set) and message. */
  refuse?: { status?: number; code?: number | string; message?: string };
  /** Accept, then fail during generation with this message (code: protocol-specific, e.g. fal error_type). */
  fail?: { message?: string; code?: number | string };
  /** What the result is; default from the catalog route of the upstream model. */
  output?: OutputKind;
  /** Number of output files (images, Suno tracks) instead of what the input asks. */
  count?: number;
  /** Duration of a video/audio output instead of what the input asks. */
  seconds?: number;
  /** kie: creditsConsumed reported in the record. */
  creditsConsumed?: number;
  /** OpenAI Images: the usage object to report. */
  usage?: Record<string, unknown>;
  /** Every result file is served with these bytes and this content type (e.g. an upstream's HTML or SVG). */
  file?: { contentType: string; body: string /** served chunked, without a content-length */; chunked?: boolean };
  /** Indexes of result files whose download answers 404 (a download failing partway through the outputs). */
  missingFiles?: number[];
  /** Veo: a result download answers 302 to the same file on another origin (`localhost` and the `cdn` prefix), as
   *  Google's file downloads redirect to a storage host; that origin serves files without a key. */
  fileRedirect?: boolean;
  /** Veo: the operation names its video on that other origin directly (an upstream pointing the gateway elsewhere). */
  fileElsewhere?: boolean;
  /** Every result file's body arrives this many ms after its headers (a slow download). */
  fileDelayMs?: number;
  /** kie Market: awaited after a submission is accepted, before it is answered (a test changes the gateway meanwhile). */
  onAccepted?: (task: FakeTask) => void | Promise<void>;
}

export type Phase = "queued" | "running" | "succeeded" | "failed" | "canceled";

export interface FakeTask {
  id: string;
  provider: Provider;
  model: string;
  input: Record<string, unknown>;
  body: unknown;
  behavior: Behavior;
  createdAt: number;
  polls: number; // "still working" answers given
  canceled: boolean;
  finishedAt?: number;
  files?: string[]; // file ids, made once when the task succeeds
  notified?: boolean; // callback/webhook sent
  notify?: (task: FakeTask) => void;
}

export interface RecordedRequest {
  provider: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface RecordedCallback {
  url: string;
  body: unknown;
  status?: number;
  error?: string;
}

type Scope = { provider?: Provider; model?: string };

const OUTPUTS = new Map<string, OutputKind>();
for (const m of catalog as Array<{ output: string; routes: Array<{ provider: string; upstream_model: string }> }>) {
  for (const r of m.routes)
    OUTPUTS.set(`${r.provider} ${r.upstream_model}`, m.output === "images" ? "image" : (m.output as OutputKind));
}

export class Control {
  readonly tasks = new Map<string, FakeTask>();
  readonly callbacks: RecordedCallback[] = [];
  private rules: Array<{ scope: Scope; behavior: Behavior }> = [];
  private onceQueue: Array<{ scope: Scope; behavior: Behavior }> = [];
  private timers = new Set<ReturnType<typeof setTimeout>>();

  set(behavior: Behavior, scope: Scope = {}): void {
    this.rules.push({ scope, behavior });
  }

  once(behavior: Behavior, scope: Scope = {}): void {
    this.onceQueue.push({ scope, behavior });
  }

  reset(): void {
    this.rules = [];
    this.onceQueue = [];
    this.callbacks.length = 0;
  }

  update(taskId: string, patch: Behavior): void {
    const t = this.tasks.get(taskId);
    if (!t) throw new Error(`no fake task ${taskId}`);
    t.behavior = { ...t.behavior, ...patch };
  }

  /** The behaviour for a new submission (consumes a matching `once`). */
  behaviorFor(provider: Provider, model: string): Behavior {
    const matches = (s: Scope) => (!s.provider || s.provider === provider) && (!s.model || s.model === model);
    const rank = (s: Scope) => (s.model ? 2 : s.provider ? 1 : 0);
    const merged = this.rules
      .filter((r) => matches(r.scope))
      .sort((a, b) => rank(a.scope) - rank(b.scope))
      .reduce<Behavior>((acc, r) => Object.assign(acc, r.behavior), {});
    const i = this.onceQueue.findIndex((r) => matches(r.scope));
    return i < 0 ? merged : { ...merged, ...this.onceQueue.splice(i, 1)[0]!.behavior };
  }

  /** Register an accepted task; with delayMs its final moment is also scheduled, for callbacks. */
  add(task: Omit<FakeTask, "createdAt" | "polls" | "canceled">): FakeTask {
    const t: FakeTask = { ...task, createdAt: Date.now(), polls: 0, canceled: false };
    this.tasks.set(t.id, t);
    if (t.behavior.delayMs !== undefined && !t.behavior.never) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.settle(t, this.phase(t));
      }, t.behavior.delayMs + 5);
      this.timers.add(timer);
    }
    return t;
  }

  /** A status poll: one more "still working" answer while the task has some left, else its final phase. */
  poll(t: FakeTask): Phase {
    const p = this.phase(t);
    if (p !== "queued" && p !== "running") return this.settle(t, p);
    t.polls++;
    return t.polls <= 1 ? "queued" : "running";
  }

  /** The phase without counting a poll (result downloads, cancels, Prefer: wait). */
  peek(t: FakeTask): Phase {
    return this.settle(t, this.phase(t));
  }

  outputOf(t: FakeTask): OutputKind {
    if (t.behavior.output) return t.behavior.output;
    if (t.provider === "kie-suno") return "audio";
    if (t.provider === "veo") return "video";
    return OUTPUTS.get(`${t.provider} ${t.model}`) ?? "image";
  }

  /** Fire-and-record a callback POST (15 s timeout, like kie). */
  async post(url: string, body: unknown): Promise<void> {
    const rec: RecordedCallback = { url, body };
    this.callbacks.push(rec);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      rec.status = res.status;
    } catch (e) {
      rec.error = (e as Error).message;
    }
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // In progress while: never; or delayMs not yet elapsed; or fewer "still working" answers given than asked.
  private phase(t: FakeTask): Phase {
    if (t.canceled) return "canceled";
    const b = t.behavior;
    const final: Phase = b.fail ? "failed" : "succeeded";
    if (t.finishedAt !== undefined) return final;
    const inProgress: Phase = t.polls <= 1 ? "queued" : "running";
    if (b.never) return inProgress;
    if (b.delayMs !== undefined) {
      const elapsed = Date.now() - t.createdAt;
      return elapsed >= b.delayMs ? final : elapsed < b.delayMs / 2 ? "queued" : "running";
    }
    return t.polls < (b.polls ?? 1) ? inProgress : final;
  }

  private settle(t: FakeTask, p: Phase): Phase {
    if ((p === "succeeded" || p === "failed") && t.finishedAt === undefined) {
      t.finishedAt = Date.now();
      if (!t.notified && t.notify) {
        t.notified = true;
        t.notify(t);
      }
    }
    return p;
  }
}
