// Result files in an S3-compatible bucket (S3_BUCKET and friends) instead of STORAGE_DIR: the gateway copies each
// upstream file there, serves it from there under its own URL, and deletes it there when retention ends. Against a
// fake S3 endpoint (test/fakes/s3.ts) that Bun's own S3 client talks to.
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { createStorage } from "../../src/media/storage";
import { startFakeS3 } from "../fakes/s3";
import { client, startMediaGateway, waitFor } from "./support";

const s3 = startFakeS3();
const S3 = {
  bucket: "results",
  endpoint: s3.url,
  region: "us-east-1",
  accessKeyId: "AKIATESTKEY",
  secretAccessKey: "s3-secret-never-sent",
};
const gw = await startMediaGateway({
  S3_BUCKET: S3.bucket,
  S3_ENDPOINT: S3.endpoint,
  S3_REGION: S3.region,
  S3_ACCESS_KEY_ID: S3.accessKeyId,
  S3_SECRET_ACCESS_KEY: S3.secretAccessKey,
  RESULT_RETENTION_DAYS: "0.00002", // ≈ 1.7 s
});
afterAll(async () => {
  await gw.stop();
  s3.stop();
});

describe("S3 result storage", () => {
  test("put, get and delete go to the bucket, signed with the key id; the secret is never sent", async () => {
    const storage = createStorage({ dir: "/nonexistent", s3: S3 });
    expect(storage.kind).toBe("s3");
    await storage.put("tok123/image.png", new Uint8Array([1, 2, 3]), "image/png");
    expect(s3.objects.get("/results/tok123/image.png")).toEqual({
      bytes: new Uint8Array([1, 2, 3]),
      type: "image/png",
    });
    const got = await storage.get("tok123/image.png");
    expect(new Uint8Array(await new Response(got).arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(await storage.get("tok123/missing.png")).toBeUndefined();
    await storage.delete("tok123/image.png");
    expect(s3.objects.has("/results/tok123/image.png")).toBe(false);
    for (const r of s3.requests) {
      expect(r.headers.authorization).toStartWith("AWS4-HMAC-SHA256 Credential=AKIATESTKEY/");
      expect(JSON.stringify(r)).not.toContain(S3.secretAccessKey);
    }
  });

  test("a task's result is copied to the bucket, served by the gateway from there, and deleted when it expires", async () => {
    const c = client(gw, (await gw.account(100)).key);
    const id = (await c.createTask("z-image", { prompt: "x" })).json.data.taskId;
    const rec = await c.waitRecord(id);
    expect(rec.state).toBe("success");
    const [url] = JSON.parse(rec.resultJson).resultUrls;
    expect(url.startsWith(gw.url + "/files/")).toBe(true);
    const [, , token, name] = new URL(url).pathname.split("/");
    const stored = s3.objects.get(`/results/${token}/${name}`);
    expect(stored).toBeDefined();
    const served = await fetch(url, { redirect: "manual" });
    expect(served.status).toBe(200); // served by the gateway, not a redirect to the bucket
    expect(served.headers.get("content-type")).toBe(stored!.type);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(stored!.bytes);
    expect(readdirSync(gw.storageDir)).toEqual([]); // nothing went to the local folder

    await waitFor(async () => ((await c.record(id)).resultsExpired ? true : undefined), 8000, "expiry");
    expect(s3.objects.has(`/results/${token}/${name}`)).toBe(false);
    expect((await fetch(url)).status).toBe(410);
  });
});
