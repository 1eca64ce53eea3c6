import { sql } from "drizzle-orm";
import { isUniqueViolation, type Db } from "../db/client";
import { newId, randomToken, sha256Hex } from "../db/ids";
import { ApiError } from "../http/errors";

// Dashboard users and their sessions. Passwords are low-entropy secrets: hashed with Bun.password (argon2id).
// Session tokens are 256-bit random: the cookie holds the token, the database only its SHA-256 (a leaked sessions
// table cannot be replayed). Each session has its own CSRF token, sent back in every form.

export const MIN_PASSWORD_LENGTH = 10;

export interface UserView {
  id: string;
  account_id: string;
  email: string;
  created_at: string;
}
export interface Session {
  id: string;
  userId: string;
  accountId: string;
  email: string;
  csrfToken: string;
  expiresAt: number;
}

// Verified against when the email is unknown, so a wrong email costs as much time as a wrong password. Made at the
// first sign-in, not at import: every CLI command imports this file, and would wait for an argon2 hash to exit.
let dummyHash: Promise<string> | null = null;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class Users {
  constructor(private db: Db) {}

  async create(accountId: string, email: string, password: string): Promise<UserView> {
    const normalized = normalizeEmail(email);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalized) || normalized.length > 320)
      throw new ApiError(422, "invalid_request", "email is not a valid address.", { param: "email" });
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new ApiError(422, "invalid_request", `password must have at least ${MIN_PASSWORD_LENGTH} characters.`, {
        param: "password",
      });
    const account = await this.db.get(sql`select id from accounts where id = ${accountId}`);
    if (!account) throw new ApiError(404, "not_found", `Account ${accountId} not found.`);
    const taken = () => new ApiError(409, "email_taken", "A user with this email already exists.", { param: "email" });
    if (await this.db.get(sql`select id from users where email = ${normalized}`)) throw taken();
    const id = newId("user");
    const now = Date.now();
    const hash = await Bun.password.hash(password);
    // Two creations of one email can both pass the check above while hashing: the unique index decides, and the
    // loser gets the same 409.
    await this.db
      .run(
        sql`insert into users (id, account_id, email, password_hash, created_at) values (${id}, ${accountId}, ${normalized}, ${hash}, ${now})`,
      )
      .catch((e) => {
        throw isUniqueViolation(e) ? taken() : e;
      });
    return { id, account_id: accountId, email: normalized, created_at: new Date(now).toISOString() };
  }

  /** The user for a correct email + password, else null (same work either way). */
  async verify(email: string, password: string): Promise<{ id: string; accountId: string } | null> {
    // Awaited whether the email is known or not: the first sign-in pays for it either way.
    const dummy = await (dummyHash ??= Bun.password.hash("not-a-real-password-" + randomToken(8)));
    const row = await this.db.get<{ id: string; account_id: string; password_hash: string }>(
      sql`select id, account_id, password_hash from users where email = ${normalizeEmail(email)}`,
    );
    const ok = await Bun.password.verify(password, row?.password_hash ?? dummy);
    return row && ok ? { id: row.id, accountId: row.account_id } : null;
  }

  /** Opens a session; returns the cookie token (shown to the browser only). */
  async openSession(userId: string, ttlMs: number): Promise<{ token: string; csrfToken: string }> {
    const token = randomToken(32);
    const csrfToken = randomToken(24);
    const now = Date.now();
    // Expired sessions of this user are cleared here rather than by a background job.
    await this.db.run(sql`delete from sessions where user_id = ${userId} and expires_at < ${now}`);
    await this.db.run(sql`insert into sessions (id, user_id, csrf_token, created_at, expires_at)
      values (${sha256Hex(token)}, ${userId}, ${csrfToken}, ${now}, ${now + ttlMs})`);
    return { token, csrfToken };
  }

  async session(token: string | undefined): Promise<Session | null> {
    if (!token || token.length > 200) return null;
    const row = await this.db.get<any>(sql`select s.id, s.user_id, s.csrf_token, s.expires_at, u.account_id, u.email
      from sessions s join users u on u.id = s.user_id where s.id = ${sha256Hex(token)} and s.expires_at > ${Date.now()}`);
    return row
      ? {
          id: row.id,
          userId: row.user_id,
          accountId: row.account_id,
          email: row.email,
          csrfToken: row.csrf_token,
          expiresAt: row.expires_at,
        }
      : null;
  }

  async closeSession(sessionId: string) {
    await this.db.run(sql`delete from sessions where id = ${sessionId}`);
  }
}
