// Byte chunks from the upstream, as one piece when a whole is needed.

/** The chunks as one Uint8Array (usually there is only one, returned as it is). */
export function joined(chunks: Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? chunks[0]! : new Uint8Array(Bun.concatArrayBuffers(chunks));
}

/**
 * Counts a token in bytes that arrive in chunks, an occurrence split between two chunks included. For tokens that
 * cannot overlap themselves (a quoted JSON string can't: two of them are never adjacent in valid JSON).
 */
export function tokenCounter(token: string): { feed(chunk: Uint8Array): void; readonly count: number } {
  const needle = Buffer.from(token);
  let carry: Buffer = Buffer.alloc(0);
  let count = 0;
  return {
    feed(chunk) {
      const buf = carry.length ? Buffer.concat([carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + needle.length)) count++;
      carry = Buffer.from(buf.subarray(Math.max(0, buf.length - (needle.length - 1)))); // a copy: the chunk is the client's
    },
    get count() {
      return count;
    },
  };
}
