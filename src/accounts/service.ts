import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { newId, randomToken, sha256Hex } from "../db/ids";
import { ApiError, notFound } from "../http/errors";
import type { Ledger } from "../ledger/service";
import { SEALED_PREFIX, SecretBox, sealedKeyId } from "./secret-box";
import { KEY_LIMITS } from "./model";
import { startBudgets } from "./key-budgets";
import { BUDGET_PERIODS, type Budget, type BudgetPeriod, type KeyPolicyChange } from "./policy";
import { BUDGET_COLUMNS, keyRules, keyView, policySets } from "./key-rows";

// Accounts, API keys and webhook signing keys. An API key is shown once at creation and stored only as a SHA-256 hash
// (keys are 256-bit random, so a fast hash is the right tool; password hashing is for low-entropy secrets).
// Authentication looks a key up by hash through a small cache, so the hot path does not touch the database on
// every request; a revocation reaches every process within KEY_CACHE_MS. A key's last use is written at most once
// per LAST_USED_STEP_MS per process, off the answer's path: precise enough to tell which keys are unused, and no
// write per request. A webhook signing key is shown once too, and stored sealed when SECRETS_KEY is set
// (secret-box.ts): signing needs the key itself, so it cannot be hashed.

export const KEY_PREFIX = "sk-sy-";
const KEY_CACHE_MS = 5_000;
const KEY_CACHE_MAX = 50_000;
export const LAST_USED_STEP_MS = 60_000;

export interface KeyLimits {
  rateRequests: number | null;
  rateWindowSeconds: number | null;
  maxConcurrentTasks: number | null;
}
/** What a key may do beyond its limits (accounts/policy.ts): null models allow every model, null expiry is never. */
export interface KeyRules {
  models: string[] | null;
  expiresAt: number | null;
  budget: Budget;
}
export interface AuthContext extends KeyLimits, KeyRules {
  keyId: string;
  accountId: string;
  keyName: string;
}
export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  rate_limit: { requests: number; window_seconds: number } | null;
  max_concurrent_tasks: number | null;
  models: string[] | null;
  expires_at: string | null;
  /** credits per period; a period absent has no cap */
  budget: Partial<Record<BudgetPeriod, number>>;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export class Accounts {
  private cache = new Map<string, { ctx: AuthContext | null; until: number }>();
  /** counts this process's key changes: a lookup that read a row before one of them must not cache it */
  private changes = 0;
  /** key id → when this process last wrote its last_used_at */
  private lastUseWritten = new Map<string, number>();

  constructor(
    private db: Db,
    private ledger: Ledger,
    private box: SecretBox = SecretBox.none,
  ) {}

  async createAccount(name: string, initialMicros: number): Promise<{ id: string; name: string; created_at: string }> {
    const id = newId("acct");
    const now = Date.now();
    const ledger = this.ledger;
    await this.db.tx(function* (q) {
      yield* q.run(sql`insert into accounts (id, name, created_at) values (${id}, ${name}, ${now})`);
      yield* ledger.openWallet(q, id, initialMicros, "initial credits");
    });
    return { id, name, created_at: new Date(now).toISOString() };
  }

  async getAccount(id: string) {
    return this.db.get<{ id: string; name: string; created_at: number; webhook_secret: string | null }>(
      sql`select id, name, created_at, webhook_secret from accounts where id = ${id}`,
    );
  }

  async requireAccount(id: string) {
    const account = await this.getAccount(id);
    if (!account) throw notFound(`Account ${id}`);
    return account;
  }

  async listAccounts() {
    return this.db.all<{ id: string; name: string; created_at: number }>(
      sql`select id, name, created_at from accounts order by created_at`,
    );
  }

  /** Creates a key and returns its plaintext once. */
  async createKey(
    accountId: string,
    opts: { name?: string } & Partial<KeyLimits> & Partial<KeyRules>,
  ): Promise<KeyView & { key: string }> {
    // Half a rate limit would quietly run with the default's other half. The window is bounded for every caller (the
    // CLI too): the limiters' timers must stay under 2^31 ms.
    if ((opts.rateRequests == null) !== (opts.rateWindowSeconds == null)) {
      throw new ApiError(
        422,
        "invalid_request",
        "A key's rate limit needs both the number of requests and the window in seconds, or neither.",
      );
    }
    const window = KEY_LIMITS.rateWindowSeconds;
    if (
      opts.rateWindowSeconds != null &&
      !(opts.rateWindowSeconds >= window.min && opts.rateWindowSeconds <= window.max)
    ) {
      throw new ApiError(
        422,
        "invalid_request",
        `A key's rate-limit window must be from ${window.min} to ${window.max} seconds.`,
      );
    }
    await this.requireAccount(accountId);
    const key = KEY_PREFIX + randomToken(30);
    const id = newId("key");
    const now = Date.now();
    const name = opts.name ?? "default";
    const budget = opts.budget ?? {};
    await this.db.run(sql`insert into api_keys (id, account_id, name, prefix, key_hash, rate_requests, rate_window_seconds, max_concurrent_tasks,
        models, expires_at, budget_day, budget_week, budget_month, budget_lifetime, created_at)
      values (${id}, ${accountId}, ${name}, ${key.slice(0, KEY_PREFIX.length + 6)}, ${sha256Hex(key)}, ${opts.rateRequests ?? null},
              ${opts.rateWindowSeconds ?? null}, ${opts.maxConcurrentTasks ?? null}, ${opts.models ? JSON.stringify(opts.models) : null},
              ${opts.expiresAt ?? null}, ${budget.day ?? null}, ${budget.week ?? null}, ${budget.month ?? null}, ${budget.lifetime ?? null}, ${now})`);
    const view = (await this.listKeys(accountId)).find((k) => k.id === id)!;
    return { ...view, key };
  }

  async listKeys(accountId: string): Promise<KeyView[]> {
    const rows = await this.db.all<any>(
      sql`select * from api_keys where account_id = ${accountId} order by created_at`,
    );
    return rows.map(keyView);
  }

  async revokeKey(accountId: string, keyId: string): Promise<KeyView> {
    const now = Date.now();
    await this.db.run(
      sql`update api_keys set revoked_at = ${now} where id = ${keyId} and account_id = ${accountId} and revoked_at is null`,
    );
    const row = await this.db.get<any>(sql`select * from api_keys where id = ${keyId} and account_id = ${accountId}`);
    if (!row) throw notFound(`Key ${keyId}`);
    this.forgetKeys(); // this process sees the revocation at once; others within KEY_CACHE_MS
    return keyView(row);
  }

  /**
   * Changes a live key's policy: only the fields given, in one update (two edits of different fields both hold).
   * This process sees the change at once; others within KEY_CACHE_MS, like a revocation.
   */
  async updateKey(accountId: string, keyId: string, change: KeyPolicyChange): Promise<KeyView> {
    const sets = policySets(change);
    const row = await this.db.get<any>(sql`select * from api_keys where id = ${keyId} and account_id = ${accountId}`);
    if (!row) throw notFound(`Key ${keyId}`);
    if (row.revoked_at != null)
      throw new ApiError(409, "key_revoked", `Key ${keyId} is revoked; a revoked key cannot be changed.`);
    // A new cap's count is started before the cap is written: a call that sees the cap holds against that count,
    // where starting it afterwards would overwrite the call's hold.
    const newlyCapped = BUDGET_PERIODS.filter((p) => change.budget?.[p] != null && row[BUDGET_COLUMNS[p]] == null);
    await startBudgets(this.db, keyId, newlyCapped, Date.now());
    if (sets.length)
      await this.db.run(
        sql`update api_keys set ${sql.join(sets, sql`, `)} where id = ${keyId} and account_id = ${accountId}`,
      );
    this.forgetKeys();
    return keyView(await this.db.get<any>(sql`select * from api_keys where id = ${keyId}`));
  }

  /** Generates or rotates the account's webhook signing key; the new key is returned once. */
  async rotateWebhookKey(accountId: string): Promise<{ key: string }> {
    await this.requireAccount(accountId);
    const key = "whsec_" + randomToken(32);
    await this.db.run(
      sql`update accounts set webhook_secret = ${await this.box.seal(key, accountId)} where id = ${accountId}`,
    );
    return { key };
  }

  async webhookSecret(accountId: string): Promise<string | null> {
    const account = await this.db.get<{ webhook_secret: string | null }>(
      sql`select webhook_secret from accounts where id = ${accountId}`,
    );
    return account?.webhook_secret == null ? null : this.box.open(account.webhook_secret, accountId);
  }

  /**
   * Seals every webhook signing key that is stored in plaintext or under a key other than the sealing one (after
   * SECRETS_KEY was set or a new key put first). The keys themselves do not change, so receivers need do nothing.
   */
  async resealWebhookSecrets(): Promise<{ resealed: number; sealing_key_id: string | null }> {
    const current = this.box.sealingKeyId;
    if (current === null) throw new RangeError("SECRETS_KEY is not set: there is no key to seal with");
    const rows = await this.db.all<{ id: string; webhook_secret: string }>(
      sql`select id, webhook_secret from accounts where webhook_secret is not null`,
    );
    let resealed = 0;
    for (const r of rows) {
      if (sealedKeyId(r.webhook_secret) === current) continue;
      const sealed = await this.box.seal(await this.box.open(r.webhook_secret, r.id), r.id);
      // Only if unchanged meanwhile: a rotation in between already sealed its new key.
      resealed += await this.db.run(
        sql`update accounts set webhook_secret = ${sealed} where id = ${r.id} and webhook_secret = ${r.webhook_secret}`,
      );
    }
    return { resealed, sealing_key_id: current };
  }

  /** The ids of keys that sealed stored secrets but are missing from SECRETS_KEY (checked at startup). */
  async unknownSealingKeys(): Promise<string[]> {
    const rows = await this.db.all<{ webhook_secret: string }>(
      sql`select webhook_secret from accounts where webhook_secret like ${SEALED_PREFIX + "%"}`,
    );
    const ids = new Set(rows.map((r) => sealedKeyId(r.webhook_secret)).filter((id): id is string => id !== null));
    return [...ids].filter((id) => !this.box.knows(id));
  }

  /** Resolves a presented key to its account, or null for unknown and revoked keys. */
  async authenticate(presented: string): Promise<AuthContext | null> {
    return this.authenticateNow(presented);
  }

  /**
   * authenticate(), answered at once (no promise) when the key is in the cache: the LLM routes' guard takes a cached
   * key without a turn of the microtask queue (http/protect.ts).
   */
  authenticateNow(presented: string): AuthContext | null | Promise<AuthContext | null> {
    const hash = sha256Hex(presented);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) {
      if (hit.ctx) this.noteUse(hit.ctx.keyId, now);
      return hit.ctx;
    }
    return this.lookUp(hash, now);
  }

  /** Drops every cached key, and the records of lookups still under way (they may have read a row from before). */
  private forgetKeys(): void {
    this.changes++;
    this.cache.clear();
  }

  private async lookUp(hash: string, now: number): Promise<AuthContext | null> {
    const changesBefore = this.changes;
    const row =
      await this.db.get<any>(sql`select id, account_id, name, rate_requests, rate_window_seconds, max_concurrent_tasks, revoked_at,
      models, expires_at, budget_day, budget_week, budget_month, budget_lifetime from api_keys where key_hash = ${hash}`);
    const ctx: AuthContext | null =
      row && row.revoked_at == null
        ? {
            keyId: row.id,
            accountId: row.account_id,
            keyName: row.name,
            rateRequests: row.rate_requests,
            rateWindowSeconds: row.rate_window_seconds,
            maxConcurrentTasks: row.max_concurrent_tasks,
            ...keyRules(row),
          }
        : null;
    if (this.cache.size >= KEY_CACHE_MAX) this.cache.clear();
    // Only known keys are cached: caching misses would let random keys fill memory.
    if (row && this.changes === changesBefore) this.cache.set(hash, { ctx, until: now + KEY_CACHE_MS });
    if (ctx) this.noteUse(ctx.keyId, now);
    return ctx;
  }

  private noteUse(keyId: string, now: number): void {
    if (now - (this.lastUseWritten.get(keyId) ?? 0) < LAST_USED_STEP_MS) return;
    if (this.lastUseWritten.size >= KEY_CACHE_MAX) this.lastUseWritten.clear();
    this.lastUseWritten.set(keyId, now);
    // Never earlier than what another process wrote; a failed write is tried again on the key's next use.
    this.db
      .run(
        sql`update api_keys set last_used_at = ${now} where id = ${keyId} and (last_used_at is null or last_used_at < ${now})`,
      )
      .catch(() => this.lastUseWritten.delete(keyId));
  }
}
