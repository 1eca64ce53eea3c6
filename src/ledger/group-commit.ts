// Group commit: work queued within one interval is written in ONE transaction. BEGIN, COMMIT and the pages a
// commit writes cost as much as its rows, so fewer, larger commits are cheaper per item; nothing waits on them but
// readers of what they write, and those can ask for the commit to start at once (drain). It knows nothing of what
// it commits: the owner says whether work is queued, whether someone waits on it, and commits one batch.

export interface GroupCommitWork {
  /** Something is queued for a commit. */
  queued(): boolean;
  /** Someone waits on the next commit (a call for its float, a full batch, shutdown): it does not wait the interval. */
  urgent(): boolean;
  /** Takes one batch from the queues and commits it. */
  commitNext(): Promise<void>;
}

export class GroupCommit {
  private running: Promise<void> | null = null;
  // For drain(): commits begun and ended (a failed one ends too), and the drain() calls waiting for a commit's end.
  private started = 0;
  private ended = 0;
  private drains: Array<{ until: number; resolve(): void }> = [];
  /** set while the loop waits out the interval: starts the commit now */
  private cutIntervalShort: (() => void) | null = null;
  private stopped = false;
  /** the last transaction begun through exclusive() */
  private lastTransaction: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly intervalMs: number,
    private readonly work: GroupCommitWork,
  ) {}

  /** A commit is under way or about to begin. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** How many commits have ended (failed ones too). */
  get commitsEnded(): number {
    return this.ended;
  }

  /** `now`: someone waits on the commit (a call for its float, a reader of the records): skip the interval. */
  schedule(now = false): void {
    if (this.running) {
      if (now) this.cutIntervalShort?.();
      return;
    }
    // Only with something to commit: the loop would return at once, and `running` be left set to its settled
    // promise, which would keep every later schedule() from starting a commit.
    if (this.work.queued()) this.running = this.loop(now);
  }

  /** Resolves once `batches` more commits than have begun so far have ended (committed or failed). */
  drain(batches: number): Promise<void> {
    const until = this.started + batches;
    if (this.ended >= until) return Promise.resolve();
    this.schedule(true);
    return new Promise((resolve) => this.drains.push({ until, resolve }));
  }

  /** No commit begins from now on (one under way ends). */
  stop(): void {
    this.stopped = true;
  }

  /**
   * One ledger transaction of this process at a time: the group commit's, a retried write's, an ask's. On
   * Postgres they run on separate connections, and two that lock a float and its wallet in opposite orders deadlock.
   */
  exclusive<T>(run: () => Promise<T>): Promise<T> {
    const mine = this.lastTransaction.then(run, run);
    this.lastTransaction = mine.catch(() => {});
    return mine;
  }

  private async loop(now: boolean): Promise<void> {
    try {
      while (this.work.queued() && !this.stopped) {
        await this.pause(now);
        if (this.stopped) break;
        now = false;
        this.started++;
        try {
          await this.work.commitNext();
        } finally {
          this.ended++;
          if (this.drains.length) this.resolveDrains();
        }
      }
    } finally {
      this.running = null;
    }
  }

  /**
   * Before each commit: let the rest of this turn of the event loop join it, and unless someone waits on it, the
   * rest of the interval too. Also between back-to-back commits, so that on Postgres, where work keeps arriving while
   * a commit awaits the network, batches stay as large; a backlog of full batches is committed back to back.
   */
  private pause(now: boolean): Promise<void> {
    if (now || this.drains.length > 0 || this.work.urgent() || this.intervalMs === 0)
      return new Promise<void>((resolve) => setImmediate(resolve));
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.cutIntervalShort = null;
        resolve();
      }, this.intervalMs);
      this.cutIntervalShort = () => {
        this.cutIntervalShort = null;
        clearTimeout(timer);
        setImmediate(resolve);
      };
    });
  }

  private resolveDrains(): void {
    const ready = this.drains.filter((drain) => drain.until <= this.ended);
    this.drains = this.drains.filter((drain) => drain.until > this.ended);
    for (const drain of ready) drain.resolve();
  }
}
