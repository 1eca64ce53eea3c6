// A task's result files: each output downloaded through the upstream URL guard (or taken as handed over inline),
// bounded by RESULT_MAX_FILE_MB, and put into storage under a fresh unguessable token. A result the gateway refuses
// (too large, missing, at an address it does not fetch from) fails the task at once instead of being polled again.
import { randomToken } from "../db/ids";
import type { Logger } from "../log";
import type { Done } from "./adapters/types";
import type { MediaModel } from "./model";
import { mediaSeconds } from "./probe";
import type { MediaSettings } from "./settings";
import { contentTypeOf, extensionOf, type Storage } from "./storage";
import { bodyUpTo, guardedFetch, UpstreamUrlRefused } from "./upstream-fetch";

export interface ResultFileDeps {
  storage: Storage;
  settings: MediaSettings;
  log: Logger;
}

/**
 * A result that will be the same at every retry: the task fails at once (refunded) with `failCode` and `message`,
 * instead of being polled again until its deadline.
 */
export class ResultRefused extends Error {
  /** `detail`: for the operator's log only (what was refused, where). */
  constructor(
    readonly failCode: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/**
 * A result URL that answers 404 or 410 (the file is not there) on every try of one step: the upstream said the task
 * is done, yet it has no file to give, and polling again would only hand over the same URL until the deadline. The
 * task fails (refunded) as result_not_stored. A few tries a second or two apart first: a CDN may lag a moment
 * behind the upstream's "done".
 */
class ResultMissing extends ResultRefused {
  constructor(status: number) {
    super(
      "result_not_stored",
      `The upstream reported the task done, but its result file answered ${status}; nothing was charged.`,
    );
  }
}
const MISSING_TRIES = 3;
const MISSING_STATUSES = new Set([404, 410]);

/** A result over RESULT_MAX_FILE_MB: it will be as large at every retry. */
class ResultTooLarge extends ResultRefused {
  constructor(limit: number) {
    super(
      "result_too_large",
      `The upstream's result is larger than this gateway stores (${Math.round(limit / 1024 / 1024)} MB); nothing was charged.`,
    );
  }
}

/** A result URL the gateway will not fetch (upstream-fetch.ts): it will be refused at every retry. */
class ResultUrlRefused extends ResultRefused {
  constructor(detail: string) {
    super(
      "result_url_refused",
      "The upstream's result file is at an address this gateway does not fetch from; nothing was charged.",
      detail,
    );
  }
}

/** The most files one result is copied with: no model makes more than 10, and each may be RESULT_MAX_FILE_MB. */
const MAX_OUTPUTS = 16;

const FALLBACK_TYPE = { images: "image/png", video: "video/mp4", audio: "audio/mpeg" } as const;

export interface StoredFile {
  token: string;
  key: string;
  name: string;
  contentType: string;
  bytes: number;
  seconds?: number;
}

/**
 * Download (or take) every output and put it into storage. Throws on a failed download (retried at the next poll),
 * after deleting what this attempt had already stored: each retry stores fresh copies under new tokens. `leaseLost`
 * (lease.ts) stops the work once the task is another worker's: its copies could never be recorded.
 */
export async function storeOutputs(
  deps: ResultFileDeps,
  taskId: string,
  model: MediaModel,
  done: Done,
  leaseLost?: AbortSignal,
): Promise<StoredFile[]> {
  const files: StoredFile[] = [];
  if (done.outputs.length > MAX_OUTPUTS)
    deps.log.warn("upstream result lists more files than the gateway copies; the rest are dropped", {
      task_id: taskId,
      listed: done.outputs.length,
      copied: MAX_OUTPUTS,
    });
  try {
    for (const [i, out] of done.outputs.slice(0, MAX_OUTPUTS).entries()) {
      leaseLost?.throwIfAborted();
      files.push(await storeOutput(deps, model, out, i, leaseLost));
    }
  } catch (e) {
    await deleteStored(deps, files);
    throw e;
  }
  return files;
}

async function storeOutput(
  deps: ResultFileDeps,
  model: MediaModel,
  out: Done["outputs"][number],
  i: number,
  leaseLost?: AbortSignal,
): Promise<StoredFile> {
  const limit = deps.settings.maxFileBytes;
  let bytes = out.bytes;
  let header = out.contentType;
  if (bytes) {
    // Handed over inline (OpenAI Images' base64): the limit bounds what is stored, however it arrived.
    if (bytes.length > limit) throw new ResultTooLarge(limit);
  } else {
    // Longer than the lease may be: the engine keeps the task's lease while this runs.
    const timeout = AbortSignal.timeout(300_000);
    const signal = leaseLost ? AbortSignal.any([timeout, leaseLost]) : timeout;
    const download = () =>
      guardedFetch(out.url!, { headers: out.headers, signal }, deps.settings.upstreamUrls).catch((e) => {
        throw e instanceof UpstreamUrlRefused ? new ResultUrlRefused(e.message) : e;
      });
    let res = await download();
    for (let tried = 1; MISSING_STATUSES.has(res.status) && tried < MISSING_TRIES; tried++) {
      void res.body?.cancel().catch(() => {});
      await Bun.sleep(tried * 1000 * deps.settings.pollScale);
      leaseLost?.throwIfAborted(); // the task is another worker's now: its copies could never be recorded
      res = await download();
    }
    if (MISSING_STATUSES.has(res.status)) throw new ResultMissing(res.status);
    if (!res.ok) throw new Error(`result download answered ${res.status}`); // anything else: retried at the next poll
    bytes = await bodyUpTo(res, limit, () => new ResultTooLarge(limit));
    header = res.headers.get("content-type") ?? header;
  }
  const contentType = contentTypeOf(bytes, header, FALLBACK_TYPE[model.output]);
  const token = randomToken(24);
  const name = `${model.output === "images" ? "image" : model.output}-${i + 1}.${extensionOf(contentType)}`;
  const key = `${token}/${name}`;
  await deps.storage.put(key, bytes, contentType);
  return {
    token,
    key,
    name,
    contentType,
    bytes: bytes.length,
    seconds: out.seconds ?? mediaSeconds(bytes, contentType),
  };
}

/** Best effort: a file that cannot be deleted now is only wasted space, never a wrong answer. */
export async function deleteStored(deps: ResultFileDeps, files: StoredFile[]): Promise<void> {
  for (const f of files) {
    await deps.storage
      .delete(f.key)
      .catch((e) => deps.log.warn("stored result file not deleted", { key: f.key, error: String(e) }));
  }
}
