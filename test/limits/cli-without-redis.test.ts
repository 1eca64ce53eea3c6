// The CLI never needs Redis (it limits no requests and runs no tasks), so it neither connects to it nor depends on
// it: it works with REDIS_URL pointing at nothing, and it opens no connection to a Redis that is there.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { freePort } from "../support/redis-server";
import { tempSqlitePath } from "../support/services";

// These tests hash passwords or start processes (seconds on a busy machine); in a full run bun 1.4.5 has been
// seen timing one out at its own 5 s default despite the preload's setDefaultTimeout, so the file sets it again.
setDefaultTimeout(30_000);

const root = new URL("../..", import.meta.url).pathname;

// Asynchronous on purpose: a spawnSync would block this process, and the listener below could not see a connection.
async function cli(args: string[], env: Record<string, string>) {
  const p = Bun.spawn(["bun", "src/cli.ts", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, exitCode] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { exitCode, out, err };
}

// Accepts connections and never answers, counting them: a client that connected would show here (and hang).
let connections = 0;
const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: () => void connections++, data() {} } });
afterAll(() => listener.stop(true));

test("with REDIS_URL at a closed port the CLI still creates and lists accounts", async () => {
  const env = { DATABASE_URL: tempSqlitePath(), REDIS_URL: `redis://127.0.0.1:${freePort()}` };
  const created = await cli(["account:create", "--name", "no-redis", "--credits", "5"], env);
  expect(created.err).toBe("");
  expect(created.exitCode).toBe(0);
  const id = JSON.parse(created.out).id;
  const list = await cli(["accounts"], env);
  expect(list.exitCode).toBe(0);
  expect(JSON.parse(list.out).data.map((a: any) => a.id)).toContain(id);
});

test("the CLI opens no connection to REDIS_URL", async () => {
  const r = await cli(["accounts"], {
    DATABASE_URL: tempSqlitePath(),
    REDIS_URL: `redis://127.0.0.1:${listener.port}`,
  });
  expect(r.exitCode).toBe(0);
  await Bun.sleep(50); // let a connection made just before the exit reach the listener's open()
  expect(connections).toBe(0);
});
