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
  const keep = needle.length - 1; // bytes of the stream's end that may begin an occurrence the next chunk completes
  let carry: Buffer = Buffer.alloc(0);
  let count = 0;
  const countIn = (buf: Buffer) => {
    for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + needle.length)) count++;
  };
  return {
    feed(chunk) {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      // Occurrences across the boundary start in the carry: the carry and the chunk's first bytes are too short to
      // hold one that does not. Then the chunk itself, searched in place.
      if (carry.length) countIn(Buffer.concat([carry, bytes.subarray(0, keep)]));
      countIn(bytes);
      // The new carry is a copy (the chunk is the client's), of at most `keep` bytes.
      carry =
        bytes.length >= keep
          ? Buffer.from(bytes.subarray(bytes.length - keep))
          : Buffer.concat([carry, bytes]).subarray(-keep);
    },
    get count() {
      return count;
    },
  };
}
