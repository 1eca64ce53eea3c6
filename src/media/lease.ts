// Keeps a task's lease for as long as one of its steps runs. A step can outlast MEDIA_LEASE_SECONDS (a result
// download may take 300 s, an OpenAI image 110 s, the lease may be set to 1 s), and a lapsed lease lets another
// worker claim the task and repeat the step: a second poll, a second download, a second paid submission. So the
// lease is pushed ahead every third of its length, and only while this worker still holds the task in a state the
// step expects; once that fails the lease is lost for good (another worker may own the task) and the step is told.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

export interface Lease {
  /** True once an extension found the task no longer ours: the step must not submit, download or write on. */
  readonly lost: boolean;
  /** Aborted when the lease is lost, so a download in progress stops instead of running to its 300 s timeout. */
  readonly signal: AbortSignal;
  /** The step is about to move the task to `state` and keep working on it (a synchronous answer: waiting → generating). */
  follow(state: string): void;
  /** Stop extending: always called when the step ends, errors included. Resolves once no extension is running. */
  stop(): Promise<void>;
}

export interface LeaseDeps {
  db: Db;
  owner: string;
  settings: { leaseMs: number };
}

export function keepLease(deps: LeaseDeps, task: { id: string; state: string }): Lease {
  const { db, owner, settings } = deps;
  const states = new Set([task.state]);
  const aborter = new AbortController();
  let lost = false;
  let extending: Promise<void> | undefined;

  const extend = async () => {
    const allowed = sql.join(
      [...states].map((s) => sql`${s}`),
      sql`, `,
    );
    try {
      const changed = await db.run(sql`update tasks set lease_until = ${Date.now() + settings.leaseMs}
        where id = ${task.id} and lease_owner = ${owner} and state in (${allowed})`);
      if (changed !== 1) markLost();
    } catch {
      // A database hiccup is not a lost lease: the lease may still be ours, and the next extension tries again. If
      // it does lapse meanwhile, the compare-and-set writes of the step refuse, as they would without this keeper.
    }
  };
  const markLost = () => {
    lost = true;
    clearInterval(timer);
    aborter.abort(new Error("the task's lease was lost"));
  };
  const timer = setInterval(
    () => {
      if (!extending) extending = extend().finally(() => (extending = undefined)); // never two at once on one task
    },
    Math.max(10, Math.floor(settings.leaseMs / 3)),
  );

  return {
    get lost() {
      return lost;
    },
    signal: aborter.signal,
    follow(state) {
      states.add(state);
    },
    async stop() {
      clearInterval(timer);
      await extending;
    },
  };
}
