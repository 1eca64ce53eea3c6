import { describe, expect, test } from "bun:test";
import { mediaSeconds } from "../../src/media/probe";
import { contentTypeOf } from "../../src/media/storage";
import { mp3Bytes, mp4Bytes, pngBytes } from "../fakes/media/index";

describe("result file probing", () => {
  test("MP4 length from mvhd, MP3 length from its frames, images have none", () => {
    expect(mediaSeconds(mp4Bytes(8), "video/mp4")).toBe(8);
    expect(mediaSeconds(mp4Bytes(4.5), "video/mp4")).toBe(4.5);
    expect(Math.abs(mediaSeconds(mp3Bytes(30), "audio/mpeg")! - 30)).toBeLessThan(0.1);
    expect(mediaSeconds(pngBytes(), "image/png")).toBeUndefined();
    expect(mediaSeconds(new Uint8Array(50), "video/mp4")).toBeUndefined();
  });

  test("a truncated mvhd is an unknown length, not an error (which would retry the task until its deadline)", () => {
    // moov (24 bytes) holding an mvhd box (16 bytes) whose body stops after 8 of the 20 bytes a version-0 one needs.
    const bytes = new Uint8Array(24);
    const v = new DataView(bytes.buffer);
    v.setUint32(0, 24);
    bytes.set(new TextEncoder().encode("moov"), 4);
    v.setUint32(8, 16);
    bytes.set(new TextEncoder().encode("mvhd"), 12);
    expect(mediaSeconds(bytes, "video/mp4")).toBeUndefined();
    // A version-1 header cut the same way.
    bytes[16] = 1;
    expect(mediaSeconds(bytes, "video/mp4")).toBeUndefined();
  });

  test("content type: a specific header wins, else the bytes say", () => {
    expect(contentTypeOf(pngBytes(), "application/octet-stream", "image/jpeg")).toBe("image/png");
    expect(contentTypeOf(mp4Bytes(5), null, "image/png")).toBe("video/mp4");
    expect(contentTypeOf(mp3Bytes(1), undefined, "image/png")).toBe("audio/mpeg");
    expect(contentTypeOf(pngBytes(), "image/webp", "image/png")).toBe("image/webp");
  });
});
