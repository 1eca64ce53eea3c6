// Application-generated ids: a readable prefix plus a time-ordered UUIDv7, so rows sort by creation and an id says
// what it names (acct_, key_, hold_, task_, ...).
export function newId(prefix: string): string {
  return `${prefix}_${Bun.randomUUIDv7("base64url")}`;
}

/** An unguessable token (for result-file paths, session cookies, secrets): 32 random bytes, base64url. */
export function randomToken(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

export function sha256Hex(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}
