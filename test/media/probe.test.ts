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

  test("content type: a specific header wins, else the bytes say", () => {
    expect(contentTypeOf(pngBytes(), "application/octet-stream", "image/jpeg")).toBe("image/png");
    expect(contentTypeOf(mp4Bytes(5), null, "image/png")).toBe("video/mp4");
    expect(contentTypeOf(mp3Bytes(1), undefined, "image/png")).toBe("audio/mpeg");
    expect(contentTypeOf(pngBytes(), "image/webp", "image/png")).toBe("image/webp");
  });
});
