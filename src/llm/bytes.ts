// Byte chunks from the upstream, as one piece when a whole is needed.

/** The chunks as one Uint8Array (usually there is only one, returned as it is). */
export function joined(chunks: Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? chunks[0]! : new Uint8Array(Bun.concatArrayBuffers(chunks));
}
