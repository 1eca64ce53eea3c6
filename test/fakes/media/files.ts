// Real (tiny) result files for the fake upstreams, so a gateway can download, store and even probe them:
// a valid 1×1 PNG, an MP4 whose `mvhd` box carries the duration, and an MP3 of silent frames of the right length.
import { deflateSync } from "node:zlib";

export type OutputKind = "image" | "video" | "audio";

export const CONTENT_TYPE: Record<OutputKind, string> = { image: "image/png", video: "video/mp4", audio: "audio/mpeg" };
export const EXTENSION: Record<OutputKind, string> = { image: "png", video: "mp4", audio: "mp3" };

function chunk(type: string, data: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** A valid 1×1 RGBA PNG (signature, IHDR, zlib IDAT, IEND with correct CRCs). */
export function pngBytes(): Uint8Array<ArrayBuffer> {
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, 1); // width
  v.setUint32(4, 1); // height
  ihdr.set([8, 6, 0, 0, 0], 8); // 8-bit, RGBA, deflate, no filter, no interlace
  const pixel = new Uint8Array([0, 255, 102, 0, 255]); // filter byte + one orange pixel
  const parts = [
    new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(pixel)),
    chunk("IEND", new Uint8Array()),
  ];
  return concat(parts);
}

function box(type: string, ...payload: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const body = concat(payload);
  const out = new Uint8Array(8 + body.length);
  new DataView(out.buffer).setUint32(0, out.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(body, 8);
  return out;
}

/** A minimal ISO-BMFF file: ftyp + moov/mvhd (timescale 1000, the duration) + a small mdat. */
export function mp4Bytes(seconds: number): Uint8Array<ArrayBuffer> {
  const ftyp = box(
    "ftyp",
    new TextEncoder().encode("isom"),
    new Uint8Array([0, 0, 2, 0]),
    new TextEncoder().encode("isommp41"),
  );
  const mvhd = new Uint8Array(100);
  const v = new DataView(mvhd.buffer);
  v.setUint32(12, 1000); // timescale: ms
  v.setUint32(16, Math.round(seconds * 1000)); // duration
  v.setUint32(20, 0x00010000); // rate 1.0
  v.setUint16(24, 0x0100); // volume 1.0
  for (const [i, x] of [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].entries()) v.setUint32(36 + i * 4, x); // identity matrix
  v.setUint32(96, 2); // next track id
  return concat([ftyp, box("moov", box("mvhd", mvhd)), box("mdat", new Uint8Array(16))]);
}

/** Duration in seconds read back from mp4Bytes' mvhd (what a gateway could do to learn the real output length). */
export function mp4DurationSeconds(bytes: Uint8Array): number | undefined {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = indexOf(bytes, "mvhd");
  if (at < 0) return undefined;
  const base = at + 4; // after the type: version/flags at base
  return v.getUint32(base + 16) / v.getUint32(base + 12);
}

/** MPEG-1 Layer III, 32 kbit/s, 44.1 kHz, mono: 104-byte frames of 1152 samples, all-zero side info = silence. */
export function mp3Bytes(seconds: number): Uint8Array<ArrayBuffer> {
  const frames = Math.max(1, Math.ceil((seconds * 44100) / 1152));
  const out = new Uint8Array(frames * 104);
  for (let i = 0; i < frames; i++) out.set([0xff, 0xfb, 0x10, 0xc4], i * 104);
  return out;
}

export function bytesFor(kind: OutputKind, seconds: number): Uint8Array<ArrayBuffer> {
  return kind === "image" ? pngBytes() : kind === "video" ? mp4Bytes(seconds) : mp3Bytes(seconds);
}

/** Files a fake serves, by id (auth, where a protocol wants it, is the handler's business: Veo). */
export class FileStore {
  private files = new Map<string, { bytes: Uint8Array; type: string; delayMs?: number; chunked?: boolean }>();

  /** A result file; with delayMs its body arrives that long after the headers. */
  put(kind: OutputKind, seconds = 5, delayMs?: number): string {
    const id = crypto.randomUUID().replaceAll("-", "");
    this.files.set(id, { bytes: bytesFor(kind, seconds), type: CONTENT_TYPE[kind], delayMs });
    return id;
  }

  /** A file with exactly these bytes and content type; `chunked`: sent without a content-length. */
  putRaw(body: string | Uint8Array, type: string, chunked?: boolean): string {
    const id = crypto.randomUUID().replaceAll("-", "");
    this.files.set(id, { bytes: typeof body === "string" ? new TextEncoder().encode(body) : body, type, chunked });
    return id;
  }

  size(id: string): number {
    return this.files.get(id)?.bytes.length ?? 0;
  }

  response(id: string): Response | undefined {
    const f = this.files.get(id.replace(/\.[a-z0-9]+$/, ""));
    if (!f) return undefined;
    if (f.chunked) {
      const { bytes } = f;
      const half = bytes.length >> 1;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(bytes.subarray(0, half));
          c.enqueue(bytes.subarray(half));
          c.close();
        },
      });
      return new Response(body, { headers: { "content-type": f.type } });
    }
    const headers = { "content-type": f.type, "content-length": String(f.bytes.length) };
    if (!f.delayMs) return new Response(f.bytes, { headers });
    const { bytes, delayMs } = f;
    const slow = new ReadableStream<Uint8Array>({
      async start(c) {
        await new Promise((r) => setTimeout(r, delayMs));
        c.enqueue(bytes);
        c.close();
      },
    });
    return new Response(slow, { headers });
  }
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function indexOf(bytes: Uint8Array, ascii: string): number {
  const needle = new TextEncoder().encode(ascii);
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
