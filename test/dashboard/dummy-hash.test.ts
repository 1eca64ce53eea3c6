// The dummy hash an unknown email is verified against (src/dashboard/users.ts) is made at the first sign-in, not
// when the module is imported: every CLI command imports it, and waited for an argon2 hash (~0.5 s on a busy
// machine) before its process could exit.
import { expect, setDefaultTimeout, test } from "bun:test";

// Starts a process; the preload's setDefaultTimeout reaches only the first file of a full run (oven-sh/bun#43787).
setDefaultTimeout(30_000);

test("importing the CLI hashes no password", async () => {
  const cli = new URL("../../src/cli", import.meta.url).pathname;
  const script = `
    let hashes = 0;
    const hash = Bun.password.hash;
    Bun.password.hash = (...args) => (hashes++, hash(...args));
    await import(${JSON.stringify(cli)});
    console.log(hashes);
  `;
  const p = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "inherit" });
  expect(await p.exited).toBe(0);
  expect((await new Response(p.stdout).text()).trim()).toBe("0");
});
