// Removing exactly one SSE event from a byte stream while every other byte passes through unchanged.
//
// Used for the chat usage chunk the gateway asked for on the client's behalf. eventsource-parser gives events,
// not byte offsets, so this finds event boundaries (a blank line: LF LF, CRLF CRLF, CR CR and mixes) itself,
// with a small state machine that survives chunk splits. Complete events are forwarded at once; the bytes of
// the event still in progress are held until its blank line arrives — a client's SSE parser cannot act on an
// incomplete event anyway, so holding them delays no event. After the one event has been removed the
// stripper steps aside and every later chunk passes untouched.

import { joined } from "../bytes.ts";

const LF = 10;
const CR = 13;
const EMPTY = new Uint8Array(0);

export interface EventStripper {
  feed(chunk: Uint8Array): Uint8Array | null;
  flush(): Uint8Array | null;
}

/** `isTarget` sees the decoded text of each complete event (blank line included) until one matches. */
export function createEventStripper(isTarget: (eventText: string) => boolean): EventStripper {
  let held: Uint8Array = EMPTY; // start of the event in progress
  let atLineStart = true; // the previous byte ended a line (or nothing came yet)
  let afterCR = false; // the previous byte was CR: an LF now is the second half of CRLF
  let crEndedEvent = false; // ...and that CR was a blank line, ending an event
  let done = false;
  let dropLeadingLF = false; // the removed event ended in CR at a chunk end; its LF may open the next chunk
  const decoder = new TextDecoder();

  function feed(chunk: Uint8Array): Uint8Array | null {
    if (done) return afterDone(chunk);
    const ends: number[] = []; // offsets just past each blank line that ends an event in this chunk
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === LF) {
        if (afterCR) {
          afterCR = false;
          // CRLF: when the CR ended an event, its LF belongs to that event too. If that event ended in the
          // previous chunk, the LF becomes a one-byte piece of its own, so it is never cut out with the next event.
          if (crEndedEvent) {
            if (ends.length > 0 && ends[ends.length - 1] === i) ends[ends.length - 1] = i + 1;
            else if (i === 0) ends.push(1);
          }
          continue;
        }
        if (atLineStart) ends.push(i + 1);
        atLineStart = true;
      } else if (b === CR) {
        crEndedEvent = atLineStart;
        if (atLineStart) ends.push(i + 1);
        atLineStart = true;
        afterCR = true;
      } else {
        atLineStart = false;
        afterCR = false;
      }
    }
    if (ends.length === 0) {
      held = held.length === 0 ? chunk.slice() : joined([held, chunk]);
      return EMPTY;
    }
    return cut(chunk, ends);
  }

  function cut(chunk: Uint8Array, ends: number[]): Uint8Array | null {
    const parts: Uint8Array[] = [];
    let removed = false;
    let start = 0;
    for (const end of ends) {
      const piece = chunk.subarray(start, end);
      const event = start === 0 && held.length > 0 ? joined([held, piece]) : piece;
      if (!done && isTarget(decoder.decode(event))) {
        done = removed = true;
        dropLeadingLF = end === chunk.length && chunk[end - 1] === CR;
      } else {
        parts.push(event);
      }
      start = end;
    }
    const hadHeld = held.length > 0;
    held = EMPTY;
    const tail = chunk.subarray(start);
    if (done) parts.push(tail);
    else if (tail.length > 0) held = tail.slice();
    // Nothing removed, nothing held before or after: the original chunk goes through as it is.
    if (!removed && !hadHeld && held.length === 0) return null;
    return joined(parts);
  }

  // Once the event is gone nothing is ever held again; only a CRLF split right after it needs care.
  function afterDone(chunk: Uint8Array): Uint8Array | null {
    if (!dropLeadingLF || chunk.length === 0) return null;
    dropLeadingLF = false;
    return chunk[0] === LF ? chunk.subarray(1) : null;
  }

  function flush(): Uint8Array | null {
    if (held.length === 0) return null;
    const out = held;
    held = EMPTY;
    return out;
  }

  return { feed, flush };
}

