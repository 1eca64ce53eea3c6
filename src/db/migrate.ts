import { migrations } from "../../drizzle/bundle";

// Applies drizzle-kit's migrations (embedded as text, so this also works inside the compiled binary) with drizzle's
// own migrator logic and bookkeeping table. On Postgres an advisory lock makes simultaneous starts of several
// gateway processes take turns instead of racing to create the same tables.

const PG_MIGRATION_LOCK = 0x5377_6974; // "Swit"

/** What migrating needs of a connection (client.ts's Db has it): migrations sit below the client, not beside it. */
export interface MigrationTarget {
  dialect: "sqlite" | "pg";
  /** the drizzle instance of the connection */
  orm: unknown;
}

export async function applyMigrations(db: MigrationTarget): Promise<void> {
  const list = migrations[db.dialect].map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: new Bun.CryptoHasher("sha256").update(m.sql).digest("hex"),
  }));
  const orm = db.orm as any;
  if (db.dialect === "sqlite") {
    // Two processes starting on one new file can both decide to migrate; the loser's transaction fails (busy, or
    // "already exists") and rolls back, and on retry it sees the winner's bookkeeping and has nothing to do.
    for (let attempt = 1; ; attempt++) {
      try {
        orm.dialect.migrate(list, orm.session, {});
        return;
      } catch (e) {
        if (attempt >= 10) throw e;
        await Bun.sleep(50 * attempt);
      }
    }
  }
  const raw = (db as any).raw;
  const conn = await raw.reserve();
  try {
    await conn.unsafe(`select pg_advisory_lock(${PG_MIGRATION_LOCK})`);
    const { drizzle } = await import("drizzle-orm/bun-sql");
    const locked = drizzle({ client: conn }) as any;
    await locked.dialect.migrate(list, locked.session, {});
  } finally {
    await conn.unsafe(`select pg_advisory_unlock(${PG_MIGRATION_LOCK})`).catch(() => {});
    conn.release();
  }
}
