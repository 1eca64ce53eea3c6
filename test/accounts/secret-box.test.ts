// Webhook signing keys sealed at rest with SECRETS_KEY (src/accounts/secret-box.ts): what a database dump shows,
// what opens and what does not, the rotation of SECRETS_KEY with `secrets:reseal`, and a gateway refusing to start
// without a key its database still needs.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { SealedSecretError, SecretBox, checkSecretsKey, sealedKeyId } from "../../src/accounts/secret-box";
import { Accounts } from "../../src/accounts/service";
import { createContext } from "../../src/bootstrap";
import { ConfigError, loadConfig } from "../../src/config";
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { silentLogger } from "../../src/log";
import { tempSqlitePath } from "../support/services";

// The CLI tests start processes (seconds on a busy machine); the preload's setDefaultTimeout reaches only the first
// file of a full run (oven-sh/bun#43787), so the file sets it again.
setDefaultTimeout(30_000);

const OLD = Buffer.alloc(32, 1).toString("base64");
const NEW = Buffer.alloc(32, 2).toString("base64");
const root = new URL("../..", import.meta.url).pathname;

describe("the box", () => {
  test("a sealed value shows neither the secret nor a repeatable pattern, and opens to it for its own row only", async () => {
    const box = await SecretBox.fromSetting(NEW);
    const a = await box.seal("whsec_abc", "acct_1");
    const b = await box.seal("whsec_abc", "acct_1");
    expect(a).toStartWith(`sy1.${box.sealingKeyId}.`);
    expect(a).not.toContain("whsec_abc");
    expect(a).not.toBe(b); // a fresh nonce each time
    expect(await box.open(a, "acct_1")).toBe("whsec_abc");
    await expect(box.open(a, "acct_2")).rejects.toBeInstanceOf(SealedSecretError);
  });

  test("an altered value does not open", async () => {
    const box = await SecretBox.fromSetting(NEW);
    const sealed = await box.seal("whsec_abc", "acct_1");
    const raw = Buffer.from(sealed.split(".")[2]!, "base64");
    raw[raw.length - 1]! ^= 1;
    await expect(box.open(`sy1.${box.sealingKeyId}.${raw.toString("base64")}`, "acct_1")).rejects.toThrow(
      "does not open",
    );
  });

  test("during a rotation the first key seals and every listed key opens; a dropped key is named", async () => {
    const old = await SecretBox.fromSetting(OLD);
    const both = await SecretBox.fromSetting(`${NEW}, ${OLD}`);
    const onlyNew = await SecretBox.fromSetting(NEW);
    const sealedOld = await old.seal("whsec_x", "acct_1");
    expect(await both.open(sealedOld, "acct_1")).toBe("whsec_x");
    expect(sealedKeyId(await both.seal("whsec_x", "acct_1"))).toBe(onlyNew.sealingKeyId!);
    await expect(onlyNew.open(sealedOld, "acct_1")).rejects.toThrow(`key ${old.sealingKeyId}`);
  });

  test("without SECRETS_KEY values are stored as they are, and plaintext always reads as it is", async () => {
    expect(await SecretBox.none.seal("whsec_x", "acct_1")).toBe("whsec_x");
    expect(await (await SecretBox.fromSetting(NEW)).open("whsec_x", "acct_1")).toBe("whsec_x");
  });

  test("SECRETS_KEY must be base64 of 32 bytes, each of a list; a bad one stops startup without showing it", () => {
    expect(checkSecretsKey(NEW)).toBeUndefined();
    expect(checkSecretsKey(`${NEW},${OLD}`)).toBeUndefined();
    expect(checkSecretsKey("hunter2-hunter2-hunter2")).toContain("32 random bytes");
    expect(checkSecretsKey(Buffer.alloc(16, 1).toString("base64"))).toContain("32 random bytes");
    expect(() => loadConfig({ SECRETS_KEY: `${NEW},not-a-key-at-all` })).toThrow(ConfigError);
    try {
      loadConfig({ SECRETS_KEY: `${NEW},not-a-key-at-all` });
    } catch (e) {
      expect((e as Error).message).toContain("SECRETS_KEY=<hidden>");
      expect((e as Error).message).not.toContain(NEW);
    }
  });
});

describe("webhook signing keys in the database", () => {
  async function open(url: string, key?: string) {
    const db = await openDatabase(url);
    return { db, accounts: new Accounts(db, new Ledger(db), await SecretBox.fromSetting(key)) };
  }
  const stored = async (db: Awaited<ReturnType<typeof openDatabase>>, id: string) =>
    (await db.get<{ webhook_secret: string }>(sql`select webhook_secret from accounts where id = ${id}`))!
      .webhook_secret;

  test("with SECRETS_KEY the row holds a sealed value; the key shown once is the one callbacks are signed with", async () => {
    const { db, accounts } = await open(tempSqlitePath(), NEW);
    const { id } = await accounts.createAccount("sealed", 0);
    const { key } = await accounts.rotateWebhookKey(id);
    expect(await stored(db, id)).toStartWith("sy1.");
    expect(await stored(db, id)).not.toContain(key);
    expect(await accounts.webhookSecret(id)).toBe(key);
    await db.close();
  });

  test("secrets:reseal seals plaintext keys, moves keys to the new SECRETS_KEY, and leaves the keys themselves unchanged", async () => {
    const url = tempSqlitePath();
    const before = await open(url); // no SECRETS_KEY yet: plaintext
    const a = await before.accounts.createAccount("a", 0);
    const b = await before.accounts.createAccount("b", 0);
    const keyA = (await before.accounts.rotateWebhookKey(a.id)).key;
    expect(await stored(before.db, a.id)).toBe(keyA);
    await before.db.close();

    const cli = (secretsKey: string) =>
      Bun.spawnSync(["bun", "src/cli.ts", "secrets:reseal"], {
        cwd: root,
        env: { ...process.env, DATABASE_URL: url, SECRETS_KEY: secretsKey },
        stdout: "pipe",
        stderr: "pipe",
      });
    const first = cli(OLD);
    expect(first.exitCode).toBe(0);
    expect(JSON.parse(first.stdout.toString())).toMatchObject({ resealed: 1 });

    const mid = await open(url, OLD);
    const keyB = (await mid.accounts.rotateWebhookKey(b.id)).key;
    expect(sealedKeyId(await stored(mid.db, a.id))).toBe(sealedKeyId(await stored(mid.db, b.id))!);
    await mid.db.close();

    const second = cli(`${NEW},${OLD}`);
    expect(JSON.parse(second.stdout.toString())).toMatchObject({ resealed: 2 });
    const after = await open(url, NEW); // the old key is gone from SECRETS_KEY: everything opens with the new one
    expect(await after.accounts.webhookSecret(a.id)).toBe(keyA);
    expect(await after.accounts.webhookSecret(b.id)).toBe(keyB);
    expect(await after.accounts.unknownSealingKeys()).toEqual([]);
    await after.db.close();
  }, 30_000);

  test("secrets:reseal without SECRETS_KEY says there is nothing to seal with", () => {
    const cli = Bun.spawnSync(["bun", "src/cli.ts", "secrets:reseal"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: tempSqlitePath(), SECRETS_KEY: "" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr.toString()).toContain("SECRETS_KEY is not set");
  });

  test("a gateway whose SECRETS_KEY lacks a key its database uses does not start: one line naming the key", async () => {
    const url = tempSqlitePath();
    const { db, accounts } = await open(url, OLD);
    const { id } = await accounts.createAccount("a", 0);
    await accounts.rotateWebhookKey(id);
    await db.close();
    const oldId = (await SecretBox.fromSetting(OLD)).sealingKeyId!;

    await expect(createContext(loadConfig({ DATABASE_URL: url, SECRETS_KEY: NEW }), silentLogger)).rejects.toThrow(
      `key(s) ${oldId}`,
    );
    await expect(createContext(loadConfig({ DATABASE_URL: url }), silentLogger)).rejects.toBeInstanceOf(ConfigError);

    const proc = Bun.spawn(["bun", "src/main.ts"], {
      cwd: root,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATABASE_URL: url, SECRETS_KEY: NEW },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^switchyard could not start: invalid configuration: SECRETS_KEY does not hold the key\\(s\\) ${oldId}`,
        ),
      ),
    ]);
  }, 30_000);
});
