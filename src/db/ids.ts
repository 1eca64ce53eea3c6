// Application-generated ids: a readable prefix plus a time-ordered UUIDv7, so rows sort by creation and an id says
// what it names (acct_, key_, hold_, task_, ...). The UUID's own hex text, because its order is the UUID's order
// (Bun counts within a millisecond); base64url is shorter but its alphabet is not in ASCII order, so same-
// millisecond rows came back shuffled from `order by created_at desc, id desc`.
export function newId(prefix: string): string {
  return `${prefix}_${Bun.randomUUIDv7()}`;
}

/** An unguessable token (for result-file paths, session cookies, secrets): 32 random bytes, base64url. */
export function randomToken(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

export function sha256Hex(text: string): string {
  return Bun.CryptoHasher.hash("sha256", text, "hex");
}
