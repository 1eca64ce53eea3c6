// The real length of a result file, read from its container, so a task is charged for what was produced (pricing
// ignores differences under half a second). MP4/MOV: the `mvhd` box (timescale, duration). MP3: the number of
// MPEG audio frames × samples per frame ÷ sample rate. Anything else: unknown (the requested length is charged).

export function mediaSeconds(bytes: Uint8Array, contentType: string): number | undefined {
  if (contentType.startsWith("video/")) return mp4Seconds(bytes);
  if (contentType === "audio/mpeg") return mp3Seconds(bytes);
  return undefined;
}

function mp4Seconds(b: Uint8Array): number | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // Walk top-level boxes to moov, then its children to mvhd (sizes are big-endian u32; 1 = 64-bit size).
  const find = (from: number, to: number, type: string): [number, number] | undefined => {
    let at = from;
    while (at + 8 <= to) {
      let size = v.getUint32(at);
      let header = 8;
      if (size === 1 && at + 16 <= to) {
        size = Number(v.getBigUint64(at + 8));
        header = 16;
      } else if (size === 0) size = to - at;
      if (size < header) return undefined;
      if (String.fromCharCode(...b.subarray(at + 4, at + 8)) === type) return [at + header, Math.min(at + size, to)];
      at += size;
    }
    return undefined;
  };
  const moov = find(0, b.length, "moov");
  const mvhd = moov && find(moov[0], moov[1], "mvhd");
  if (!mvhd) return undefined;
  const p = mvhd[0];
  const version = b[p];
  // A truncated mvhd is an unknown length (the requested one is charged), not an error that retries the task.
  if (p + (version === 1 ? 32 : 20) > mvhd[1]) return undefined;
  const timescale = version === 1 ? v.getUint32(p + 20) : v.getUint32(p + 12);
  const duration = version === 1 ? Number(v.getBigUint64(p + 24)) : v.getUint32(p + 16);
  return timescale ? duration / timescale : undefined;
}

const BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const RATES_V1 = [44100, 48000, 32000];

function mp3Seconds(b: Uint8Array): number | undefined {
  let at = 0;
  if (b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33 && b.length > 10) {
    at = 10 + ((b[6]! << 21) | (b[7]! << 14) | (b[8]! << 7) | b[9]!); // skip the ID3v2 tag
  }
  let frames = 0;
  let rate = 0;
  while (at + 4 <= b.length) {
    // MPEG-1 Layer III frames only (what the upstreams deliver); stop at the first thing that is not one.
    if (b[at] !== 0xff || (b[at + 1]! & 0xfe) !== 0xfa) break;
    const bitrate = BITRATES_V1_L3[b[at + 2]! >> 4];
    const sr = RATES_V1[(b[at + 2]! >> 2) & 3];
    if (!bitrate || !sr) break;
    const padding = (b[at + 2]! >> 1) & 1;
    at += Math.floor((144 * bitrate * 1000) / sr) + padding;
    frames++;
    rate = sr;
  }
  return frames && rate ? (frames * 1152) / rate : undefined;
}
