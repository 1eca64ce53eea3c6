// Money tests of the LLM routes run once on a SQLite file and once on Postgres (a fresh database of their own);
// without a reachable Postgres that half is skipped, saying so.
import { afterAll, beforeAll, describe } from "bun:test";
import { freshPostgres, pgAvailable, skipNote, tempSqlitePath } from "../support/services";

/** `body` once per database; `databaseUrl()` is its DATABASE_URL, ready from the suite's first beforeAll on. */
export function eachDatabase(name: string, body: (databaseUrl: () => string) => void) {
  describe(`${name} (SQLite)`, () => {
    const url = tempSqlitePath();
    body(() => url);
  });
  skipNote("Postgres", pgAvailable, name);
  describe.skipIf(!pgAvailable)(`${name} (Postgres)`, () => {
    let url = "";
    let drop = async () => {};
    beforeAll(async () => {
      const pg = await freshPostgres();
      url = pg.url;
      drop = pg.drop;
    });
    afterAll(() => drop());
    body(() => url);
  });
}
