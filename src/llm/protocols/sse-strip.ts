// Removing exactly one SSE event (the chat usage chunk the gateway asked for on the client's behalf) from a byte
// stream while every other byte passes through unchanged. eventsource-parser gives events, not byte offsets, so
// this finds event boundaries itself, with a state machine that survives chunk splits; once the event is gone the
// stripper steps aside.

import { joined } from "../bytes";

const LF = 10;
const CR = 13;
const EMPTY = new Uint8Array(0);

export interface EventStripper {
  feed(chunk: Uint8Array): Uint8Array | null;
  flush(): Uint8Array | null;
}

/** `isTarget` sees the decoded text of each complete event (blank line included) until one matches. */
export function createEventStripper(isTarget: (eventText: string) => boolean): EventStripper {
  return new Stripper(isTarget);
}

// An event ends at a blank line (LF LF, CRLF CRLF, CR CR and mixes). The bytes of the event in progress are held
// until its blank line arrives: a client's SSE parser cannot act on an incomplete event, so this delays no event.
class Stripper implements EventStripper {
  private held: Uint8Array = EMPTY; // start of the event in progress
  private atLineStart = true; // the previous byte ended a line (or nothing came yet)
  private afterCR = false; // the previous byte was CR: an LF now is the second half of CRLF
  private crEndedEvent = false; // ...and that CR was a blank line, ending an event
  private done = false;
  private dropLeadingLF = false; // the removed event ended in CR at a chunk end; its LF may open the next chunk
  private readonly decoder = new TextDecoder();

  constructor(private readonly isTarget: (eventText: string) => boolean) {}

  feed(chunk: Uint8Array): Uint8Array | null {
    if (this.done) return this.afterDone(chunk);
    const ends = this.eventEnds(chunk);
    if (ends.length === 0) {
      this.held = this.held.length === 0 ? chunk.slice() : joined([this.held, chunk]);
      return EMPTY;
    }
    return this.cut(chunk, ends);
  }

  flush(): Uint8Array | null {
    if (this.held.length === 0) return null;
    const out = this.held;
    this.held = EMPTY;
    return out;
  }

  /** Offsets just past each blank line that ends an event in this chunk. */
  private eventEnds(chunk: Uint8Array): number[] {
    const ends: number[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === LF) {
        if (this.afterCR) {
          this.afterCR = false;
          // CRLF: when the CR ended an event, its LF belongs to that event too. If that event ended in the
          // previous chunk, the LF becomes a one-byte piece of its own, so it is never cut out with the next event.
          if (this.crEndedEvent) {
            if (ends.length > 0 && ends[ends.length - 1] === i) ends[ends.length - 1] = i + 1;
            else if (i === 0) ends.push(1);
          }
          continue;
        }
        if (this.atLineStart) ends.push(i + 1);
        this.atLineStart = true;
      } else if (byte === CR) {
        this.crEndedEvent = this.atLineStart;
        if (this.atLineStart) ends.push(i + 1);
        this.atLineStart = true;
        this.afterCR = true;
      } else {
        this.atLineStart = false;
        this.afterCR = false;
      }
    }
    return ends;
  }

  private cut(chunk: Uint8Array, ends: number[]): Uint8Array | null {
    const parts: Uint8Array[] = [];
    let removed = false;
    let start = 0;
    for (const end of ends) {
      const piece = chunk.subarray(start, end);
      const event = start === 0 && this.held.length > 0 ? joined([this.held, piece]) : piece;
      if (!this.done && this.isTarget(this.decoder.decode(event))) {
        this.done = removed = true;
        this.dropLeadingLF = end === chunk.length && chunk[end - 1] === CR;
      } else {
        parts.push(event);
      }
      start = end;
    }
    const hadHeld = this.held.length > 0;
    this.held = EMPTY;
    const tail = chunk.subarray(start);
    if (this.done) parts.push(tail);
    else if (tail.length > 0) this.held = tail.slice();
    // Nothing removed, nothing held before or after: the original chunk goes through as it is.
    if (!removed && !hadHeld && this.held.length === 0) return null;
    return joined(parts);
  }

  // Once the event is gone nothing is ever held again; only a CRLF split right after it needs care.
  private afterDone(chunk: Uint8Array): Uint8Array | null {
    if (!this.dropLeadingLF || chunk.length === 0) return null;
    this.dropLeadingLF = false;
    return chunk[0] === LF ? chunk.subarray(1) : null;
  }
}
