import { Database as SqliteDatabase } from "bun:sqlite";
import { SQL as BunSQL } from "bun";
import { is, Placeholder, type SQL } from "drizzle-orm";
import { drizzle as drizzleSqlite } from "drizzle-orm/bun-sqlite";
import { drizzle as drizzlePg } from "drizzle-orm/bun-sql";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { PgDialect } from "drizzle-orm/pg-core";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import * as sqliteSchema from "./schema.sqlite";
import { applyMigrations } from "./migrate";
import { startCheckpointer } from "./checkpointer";
import { isBusy, whenUnlocked } from "./sqlite-busy";

// One database facade over bun:sqlite and Bun.SQL (Postgres).
//
// Queries are written once with drizzle's `sql` template (portable placeholders) and run through `all`/`run`.
// Multi-statement work goes through `tx(function* (q) { ... })`: the body is a generator that yields statements.
// On SQLite the driver runs it synchronously inside one IMMEDIATE transaction (bun:sqlite transactions are
// synchronous: an awaited body would interleave with other requests); on Postgres it runs the same body inside
// `BEGIN ... COMMIT` with awaits. One piece of logic, two drivers, no dialect `if`s in the ledger.

export type Row = Record<string, any>;
export type Dialect = "sqlite" | "pg";

/**
 * Values for a statement's named placeholders (`sql.placeholder(name)`); or, for a statement whose every parameter
 * is a placeholder, their values in the order they appear (a multi-row insert, where naming each would cost more).
 */
export type Values = NamedValues | readonly unknown[];
export type NamedValues = Record<string, unknown>;
/** A statement yielded from a transaction body. Use the helpers `q.all`, `q.get`, `q.run` with `yield*`. */
export type Step = { sql: SQL; mode: "all" | "run"; values?: Values };
export type TxBody<T> = (q: TxQueries) => Generator<Step, T, any>;
export interface TxQueries {
  all<R = Row>(s: SQL, values?: Values): Generator<Step, R[], any>;
  get<R = Row>(s: SQL, values?: Values): Generator<Step, R | undefined, any>;
  /** Returns the number of rows changed. */
  run(s: SQL, values?: Values): Generator<Step, number, any>;
}

export interface Db {
  dialect: Dialect;
  /** drizzle instance (typed with the SQLite schema; the runtime object matches the dialect). */
  orm: ReturnType<typeof drizzleSqlite<typeof sqliteSchema>>;
  all<R = Row>(s: SQL, values?: Values): Promise<R[]>;
  get<R = Row>(s: SQL, values?: Values): Promise<R | undefined>;
  run(s: SQL, values?: Values): Promise<number>;
  tx<T>(body: TxBody<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const txQueries: TxQueries = {
  *all(s, values) {
    return (yield { sql: s, mode: "all", values }) as any[];
  },
  *get(s, values) {
    const rows = (yield { sql: s, mode: "all", values }) as any[];
    return rows[0];
  },
  *run(s, values) {
    return (yield { sql: s, mode: "run", values }) as number;
  },
};

/** A statement compiled once: its text, and per parameter either a placeholder's name or a fixed value. */
interface Compiled<S> {
  text: string;
  params: Array<{ name: string } | { value: unknown }>;
  /** every parameter is a placeholder: values may come as an array, in order */
  positional: boolean;
  prepared: S;
}

/**
 * Compiles statements with placeholders once per database; plain statements are compiled per call. Which
 * parameter is a placeholder is worked out once, at compile time: drizzle's own fillPlaceholders re-checks every
 * parameter with its `is()` on every call, which showed in the profile of the hot path.
 */
function compiler<S>(toQuery: (s: SQL) => { sql: string; params: unknown[] }, prepare: (text: string) => S) {
  const cache = new WeakMap<SQL, Compiled<S>>();
  return (s: SQL, values: Values | undefined): { text: string; params: unknown[]; prepared: S | null } => {
    if (!values) {
      const q = toQuery(s);
      return { text: q.sql, params: q.params, prepared: null };
    }
    let c = cache.get(s);
    if (!c) {
      const q = toQuery(s);
      const params = q.params.map((p) => (is(p, Placeholder) ? { name: p.name as string } : { value: p }));
      c = { text: q.sql, params, positional: params.every((p) => "name" in p), prepared: prepare(q.sql) };
      cache.set(s, c);
    }
    if (Array.isArray(values)) {
      if (!c.positional || values.length !== c.params.length)
        throw new Error(`${values.length} values in order for ${c.params.length} parameters of: ${c.text}`);
      return { text: c.text, params: values as unknown[], prepared: c.prepared };
    }
    const named = values as NamedValues;
    const params = new Array(c.params.length);
    for (let i = 0; i < params.length; i++) {
      const p = c.params[i]!;
      if ("value" in p) params[i] = p.value;
      else if (p.name in named) params[i] = named[p.name];
      else throw new Error(`no value for placeholder "${p.name}" of: ${c.text}`);
    }
    return { text: c.text, params, prepared: c.prepared };
  };
}

export interface OpenOptions {
  /** Postgres connections at most (background workers open small pools of their own). */
  poolSize?: number;
  /** SQLite file: checkpoint the WAL in a worker instead of inside this connection's commits (checkpointer.ts). */
  backgroundCheckpoints?: { onError(message: string): void };
}

export async function openDatabase(url: string, opts: OpenOptions = {}): Promise<Db> {
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const db = openPostgres(url, opts.poolSize ?? 20);
    await applyMigrations(db);
    return db;
  }
  const db = openSqlite(url);
  await applyMigrations(db);
  // From now on a lock held elsewhere is waited for by awaiting (sqlite-busy.ts), not inside the call.
  db.raw.exec("PRAGMA busy_timeout = 0;");
  if (opts.backgroundCheckpoints && url !== ":memory:") {
    const checkpointer = await startCheckpointer(db.raw, url, opts.backgroundCheckpoints.onError);
    const close = db.close;
    db.close = async () => {
      await checkpointer.stop();
      await close();
    };
  }
  return db;
}

/** The database cannot be opened (a SQLite file, its folder, a Postgres URL Bun.SQL cannot read): the operator's DATABASE_URL to fix (server.ts). */
export class DatabaseOpenError extends Error {}

function openSqlite(path: string): Db & { raw: SqliteDatabase } {
  let raw: SqliteDatabase;
  // A file that is not a SQLite database opens, and fails only at its first statement (SQLITE_NOTADB): the pragmas
  // are inside too.
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    raw = new SqliteDatabase(path, { create: true, strict: true });
    // WAL: readers never block the writer; synchronous=NORMAL is durable across process crashes in WAL mode.
    // busy_timeout first: switching to WAL takes a lock another process opening the same file may hold.
    raw.exec("PRAGMA busy_timeout = 5000;");
    raw.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
  } catch (e) {
    throw new DatabaseOpenError((e as Error).message);
  }
  const dialect = new SQLiteSyncDialect();
  const compile = compiler(
    (s) => dialect.sqlToQuery(s),
    (text) => raw.prepare(text),
  );
  const exec = (s: SQL, mode: "all" | "run", values?: Values) => {
    const { text, params, prepared } = compile(s, values);
    const stmt = prepared ?? raw.query(text); // bun:sqlite caches compiled statements by text
    return mode === "all" ? stmt.all(...(params as any[])) : stmt.run(...(params as any[])).changes;
  };
  const drive = <T>(body: TxBody<T>): T => {
    const it = body(txQueries);
    let r = it.next();
    while (!r.done) r = it.next(exec(r.value.sql, r.value.mode, r.value.values));
    return r.value;
  };
  const orm = drizzleSqlite({ client: raw, schema: sqliteSchema });
  // A transaction is attempted again only when refused at its BEGIN IMMEDIATE, before its body ran: once begun it
  // holds the write lock, so a SQLITE_BUSY later (none is expected in WAL mode) is an error like any other.
  const transaction = <T>(body: TxBody<T>): T => {
    let began = false;
    try {
      return raw
        .transaction(() => {
          began = true;
          return drive(body);
        })
        .immediate();
    } catch (e) {
      if (began && isBusy(e))
        throw new Error(`SQLite was busy inside a transaction: ${(e as Error).message}`, { cause: e });
      throw e;
    }
  };
  return {
    dialect: "sqlite",
    raw,
    orm,
    all: (s, v) => whenUnlocked(() => exec(s, "all", v) as any),
    get: (s, v) => whenUnlocked(() => (exec(s, "all", v) as any[])[0]),
    run: (s, v) => whenUnlocked(() => exec(s, "run", v) as number),
    tx: (body) => whenUnlocked(() => transaction(body)),
    ping: async () => void raw.query("select 1").get(),
    close: async () => raw.close(),
  };
}

function openPostgres(url: string, max: number): Db & { raw: BunSQL } {
  let raw: BunSQL;
  try {
    raw = new BunSQL(url, { max, bigint: false });
  } catch (e) {
    // Its message is "Invalid URL" (Bun hides the URL): most often a password with an unescaped `#`, `/` or `?`.
    throw new DatabaseOpenError(
      `${(e as Error).message} (percent-encode special characters in the user name and password)`,
    );
  }
  const dialect = new PgDialect();
  // Bun.SQL prepares statements per connection by their text itself.
  const compile = compiler(
    (s) => dialect.sqlToQuery(s),
    () => null,
  );
  const exec = async (client: BunSQL, s: SQL, mode: "all" | "run", values?: Values) => {
    const { text, params } = compile(s, values);
    const result: any = await client.unsafe(text, params as any[]);
    return mode === "all" ? numericRows(result) : result.count;
  };
  const orm = drizzlePg({ client: raw, schema: sqliteSchema as any }) as any;
  return {
    dialect: "pg",
    raw,
    orm,
    all: (s, v) => exec(raw, s, "all", v),
    get: async (s, v) => (await exec(raw, s, "all", v))[0],
    run: (s, v) => exec(raw, s, "run", v),
    tx: (body) =>
      raw.begin(async (tx: any) => {
        const it = body(txQueries);
        let r = it.next();
        while (!r.done) r = it.next(await exec(tx, r.value.sql, r.value.mode, r.value.values));
        return r.value;
      }) as any,
    ping: async () => void (await raw.unsafe("select 1")),
    close: async () => raw.close(),
  };
}

/** Text from elsewhere (an upstream's error message), storable: Postgres text cannot hold U+0000, SQLite can. */
export function storableText(s: string): string {
  return s.includes("\0") ? s.replaceAll("\0", "\uFFFD") : s;
}

/**
 * A unique index or the primary key refused the row (SQLite's SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY, Postgres'
 * 23505 for both): the caller's conflict.
 */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: unknown; errno?: unknown };
  return (
    err?.code === "SQLITE_CONSTRAINT_UNIQUE" || err?.code === "SQLITE_CONSTRAINT_PRIMARYKEY" || err?.errno === "23505"
  );
}

// Bun.SQL returns int8 (COUNT, our integer columns) and numeric (SUM) as strings; int2/int4/float4/float8 already come
// back as numbers. Which values to convert is decided by the column's type OID, which Bun.SQL reports on the result
// (`result.columns[i].type`): converting every string that looks like digits would turn a text column holding "007"
// into 7, and SQLite returns such text as it is. (Bun.SQL has no option to parse int8 as a number: `bigint: true`
// gives BigInts, and numeric stays a string either way.) Every number in our schema is a safe 64-bit integer, so
// Number() is exact; it is also what bun:sqlite returns for an integer. null stays null.
const NUMBER_OIDS = new Set([
  21, // int2
  23, // int4
  20, // int8
  1700, // numeric
  700, // float4
  701, // float8
]);

function numericRows(result: Row[] & { columns?: Array<{ name: string; type: number }> | null }): Row[] {
  // Two columns of one name (a join's `select *`): the row holds the last one's value, so its type decides.
  const isNumber = new Map<string, boolean>();
  for (const c of result.columns ?? []) isNumber.set(c.name, NUMBER_OIDS.has(c.type));
  const names: string[] = [];
  for (const [name, yes] of isNumber) if (yes) names.push(name);
  // A plain array of the rows, as before (not Bun's result array with its metadata accessors).
  return result.map((row) => {
    for (const k of names) {
      const v = row[k];
      if (typeof v === "string") row[k] = Number(v);
    }
    return row;
  });
}
