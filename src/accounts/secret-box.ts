// Secrets the gateway must read back, sealed at rest. A webhook signing key cannot be stored hashed like an API key
// (signing needs the key itself), so with SECRETS_KEY set it is stored encrypted (AES-256-GCM, a fresh nonce per
// value, the row's account id as additional data, so a value copied onto another account does not open), and a
// database dump holds no usable signing key. A value without SEALED_PREFIX is plaintext and is read as it is.

/** What every sealed value starts with (a plaintext one never does: signing keys start `whsec_`). */
export const SEALED_PREFIX = "sy1.";
const NONCE_BYTES = 12;

export class SealedSecretError extends Error {}

interface BoxKey {
  id: string;
  key: CryptoKey;
}

// Stored form: `sy1.<key id>.<base64 of nonce ‖ ciphertext ‖ tag>`; the key id (first 8 hex digits of the key's
// SHA-256) names the sealing key, so SECRETS_KEY may list several, newest first: the first seals, every one opens.
// Rotation: put the new key first, run `secrets:reseal`, then drop the old one.
export class SecretBox {
  private constructor(private readonly keys: BoxKey[]) {}

  /** A box without keys: values are stored as they are (SECRETS_KEY unset). */
  static readonly none = new SecretBox([]);

  /** From the SECRETS_KEY setting: comma-separated base64 keys of 32 bytes, the first one sealing (settings.ts checks the form). */
  static async fromSetting(value: string | undefined): Promise<SecretBox> {
    if (!value) return SecretBox.none;
    const keys = await Promise.all(
      splitKeys(value).map(async (b64) => {
        const bytes = Buffer.from(b64, "base64");
        const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
        return {
          id: Buffer.from(digest.subarray(0, 4)).toString("hex"),
          key: await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]),
        };
      }),
    );
    return new SecretBox(keys);
  }

  /** The id of the key that seals, or null when values are stored as they are. */
  get sealingKeyId(): string | null {
    return this.keys[0]?.id ?? null;
  }

  knows(keyId: string): boolean {
    return this.keys.some((k) => k.id === keyId);
  }

  /** `plain` as it is to be stored for `context` (the row it belongs to). */
  async seal(plain: string, context: string): Promise<string> {
    const k = this.keys[0];
    if (!k) return plain;
    const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv: nonce, additionalData: encode(context) },
        k.key,
        encode(plain),
      ),
    );
    return `${SEALED_PREFIX}${k.id}.${Buffer.concat([nonce, sealed]).toString("base64")}`;
  }

  /** The plaintext of a stored value; throws SealedSecretError when its key is not configured or it was tampered with. */
  async open(stored: string, context: string): Promise<string> {
    const keyId = sealedKeyId(stored);
    if (keyId === null) return stored;
    const k = this.keys.find((x) => x.id === keyId);
    if (!k) throw new SealedSecretError(`a secret is sealed with key ${keyId}, which SECRETS_KEY does not hold`);
    const bytes = Buffer.from(stored.slice(SEALED_PREFIX.length + keyId.length + 1), "base64");
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: bytes.subarray(0, NONCE_BYTES), additionalData: encode(context) },
        k.key,
        bytes.subarray(NONCE_BYTES),
      );
      return decoder.decode(plain);
    } catch {
      throw new SealedSecretError(`a secret sealed with key ${keyId} does not open: altered, or stored on another row`);
    }
  }
}

/** The id of the key a stored value is sealed with, or null for a plaintext value. */
export function sealedKeyId(stored: string): string | null {
  if (!stored.startsWith(SEALED_PREFIX)) return null;
  const dot = stored.indexOf(".", SEALED_PREFIX.length);
  return dot === -1 ? null : stored.slice(SEALED_PREFIX.length, dot);
}

function splitKeys(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The SECRETS_KEY check (settings.ts): every listed key is base64 of exactly 32 bytes. */
export function checkSecretsKey(value: string): string | undefined {
  const keys = splitKeys(value);
  if (keys.length === 0) return "must list at least one key";
  const bad = keys.some((k) => !/^[A-Za-z0-9+/]{43}=$/.test(k) || Buffer.from(k, "base64").length !== 32);
  return bad ? "each key must be 32 random bytes in base64 (openssl rand -base64 32)" : undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function encode(s: string): Uint8Array {
  return encoder.encode(s);
}
