// How long the gateway waits on an upstream: for its response headers (LLM_FIRST_BYTE_TIMEOUT_SECONDS; a
// non-streaming reasoning call may think for minutes) and between two chunks of its body
// (LLM_SILENCE_TIMEOUT_SECONDS). Both are the gateway's own timers, so Bun's idle timeout is lifted while a call waits
// on its upstream: a healthy stream is governed by these settings, never cut by Bun. What fires ends the call as
// `upstream_timeout`: a 504 before the answer's first byte, the protocol's in-stream error event after it.

import { ApiError } from "../http/errors";

/** The server's idle timeout (server.ts listens with it), restored on a connection once its LLM call has ended. */
export const SERVER_IDLE_TIMEOUT_SECONDS = 255;

export interface LlmTimeouts {
  /** the longest wait for an upstream's response headers, ms */
  firstByteMs: number;
  /** the longest silence between two chunks of an upstream's body (or after its headers), ms */
  silenceMs: number;
}

/** The two settings (decimal seconds, settings.ts checks them) as ms. */
export function llmTimeoutsOf(raw: Record<string, string | undefined>): LlmTimeouts {
  return {
    firstByteMs: Number(raw.LLM_FIRST_BYTE_TIMEOUT_SECONDS) * 1000,
    silenceMs: Number(raw.LLM_SILENCE_TIMEOUT_SECONDS) * 1000,
  };
}

/** An upstream kept the gateway waiting longer than the setting named allows. */
export class UpstreamTimeout extends Error {
  constructor(readonly setting: "LLM_FIRST_BYTE_TIMEOUT_SECONDS" | "LLM_SILENCE_TIMEOUT_SECONDS") {
    super(`upstream timed out (${setting})`);
  }
}

export const TIMED_OUT_MESSAGE =
  "The upstream did not answer in time; the gateway gave up on it and nothing was charged. Retry the request.";

/** The client's 504 for a timeout before any of the answer was sent. */
export function upstreamTimeoutError(provider: string): ApiError {
  return new ApiError(
    504,
    "upstream_timeout",
    `The ${provider} upstream did not answer in time; the gateway gave up on it and nothing was charged. Retry the request.`,
  );
}

/**
 * Fires `onSilence` once `ms` have passed without `heard()`. One timer per call, re-armed only when it fires early
 * (a chunk came meanwhile): a chunk costs a timestamp, never a timer.
 */
export class SilenceTimer {
  fired = false;
  private heardAt = performance.now();
  private timer: ReturnType<typeof setTimeout> | null;

  constructor(
    private readonly ms: number,
    private readonly onSilence: () => void,
  ) {
    this.timer = setTimeout(this.check, ms);
  }

  heard(): void {
    this.heardAt = performance.now();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private check = () => {
    const quiet = performance.now() - this.heardAt;
    if (quiet < this.ms) {
      this.timer = setTimeout(this.check, this.ms - quiet);
      return;
    }
    this.timer = null;
    this.fired = true;
    this.onSilence();
  };
}

/** What the proxy needs of Bun's server: its per-request idle timeout. */
export interface IdleTimeouts {
  timeout(request: Request, seconds: number): void;
}

/**
 * The idle timeout of `request`'s connection, for a call handed a copy of that Request (an idempotent call's, whose
 * body was read once: llm/idempotent.ts). Bun's server knows only the Request it was given: set on the copy, the
 * timeout was never lifted, and a stream silent for longer than the server's idle timeout was cut.
 */
export function connectionTimeouts(server: IdleTimeouts, request: Request): IdleTimeouts {
  return { timeout: (_copy, seconds) => server.timeout(request, seconds) };
}

/** While a call waits on its upstream, only the timers above may end it: Bun's idle timeout is lifted. */
export function liftIdleTimeout(server: IdleTimeouts | null | undefined, request: Request): void {
  setIdle(server, request, 0);
}

/** The call has ended: the connection (kept alive for the client's next request) idles out as any other. */
export function restoreIdleTimeout(server: IdleTimeouts | null | undefined, request: Request): void {
  setIdle(server, request, SERVER_IDLE_TIMEOUT_SECONDS);
}

function setIdle(server: IdleTimeouts | null | undefined, request: Request, seconds: number): void {
  try {
    server?.timeout(request, seconds);
  } catch {
    // the connection is already gone: nothing to time out
  }
}
