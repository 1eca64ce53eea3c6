// `cli holds:sweep` releases what the server's sweeper releases (expired LLM holds and floats) and leaves media
// task holds to the engine: voiding one under a running task would let the task succeed without being charged.
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Accounts } from "../../src/accounts/service";
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { MICROS_PER_CREDIT } from "../../src/ledger/units";
import { tempSqlitePath } from "../support/services";

test("holds:sweep releases expired LLM holds and floats, not media task holds", async () => {
  const url = tempSqlitePath();
  const db = await openDatabase(url);
  const ledger = new Ledger(db);
  const a = await new Accounts(db, ledger).createAccount("sweep", 10 * MICROS_PER_CREDIT);
  const held = {
    llm: await ledger.hold(a.id, MICROS_PER_CREDIT, "llm", null, 1),
    float: await ledger.hold(a.id, MICROS_PER_CREDIT, "float", null, 1),
    task: await ledger.hold(a.id, MICROS_PER_CREDIT, "task", "task_x", 1),
  };
  await db.close();
  await Bun.sleep(5);

  const cli = Bun.spawnSync(["bun", "src/cli.ts", "holds:sweep"], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...process.env, DATABASE_URL: url },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(cli.exitCode).toBe(0);
  expect(JSON.parse(cli.stdout.toString())).toEqual({ released: 2 });

  const again = await openDatabase(url);
  const status = async (id: string) =>
    (await again.get<{ status: string }>(sql`select status from holds where id = ${id}`))!.status;
  expect(await status(held.llm.id)).toBe("voided");
  expect(await status(held.float.id)).toBe("voided");
  expect(await status(held.task.id)).toBe("pending");
  expect(await new Ledger(again).balance(a.id)).toEqual({
    balance: 10 * MICROS_PER_CREDIT,
    held: MICROS_PER_CREDIT,
    available: 9 * MICROS_PER_CREDIT,
  });
  await again.close();
});
