// Two creations of the same dashboard user at once (a double-clicked script, two operators): one 201, one 409 —
// the unique index decides while both are hashing the password — never a 500. On SQLite and on Postgres.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { freshPostgres, pgAvailable, skipNote } from "../support/services";
import { startGateway, type TestGateway } from "../support/gateway";
import { errorOf } from "../support/json";

// These tests hash passwords or start processes (seconds on a busy machine); in a full run bun 1.4.5 has been
// seen timing one out at its own 5 s default despite the preload's setDefaultTimeout, so the file sets it again.
setDefaultTimeout(30_000);

skipNote("Postgres", pgAvailable, "concurrent user creation on Postgres");
const stops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

async function createTwiceAtOnce(gw: TestGateway) {
  const { accountId } = await gw.account(1);
  const body = JSON.stringify({ email: `race-${crypto.randomUUID()}@example.com`, password: "long-enough-password" });
  const answers = await Promise.all(
    [1, 2, 3].map(() => gw.admin(`/admin/v1/accounts/${accountId}/users`, { method: "POST", body })),
  );
  const statuses = answers.map((r) => r.status).sort();
  expect(statuses).toEqual([201, 409, 409]);
  const conflict = await errorOf(answers.find((r) => r.status === 409)!);
  expect(conflict.error).toMatchObject({ code: "email_taken", param: "email" });
}

test("SQLite: one user is created, the others get 409 email_taken", async () => {
  const gw = await startGateway();
  stops.push(() => gw.stop());
  await createTwiceAtOnce(gw);
});

test.skipIf(!pgAvailable)("Postgres: one user is created, the others get 409 email_taken", async () => {
  const db = await freshPostgres();
  const gw = await startGateway({ DATABASE_URL: db.url });
  stops.push(async () => {
    await gw.stop();
    await db.drop();
  });
  await createTwiceAtOnce(gw);
});
