// A minimal S3-compatible object store for tests: path-style PUT / GET / HEAD / DELETE of objects, which is what
// Bun's S3Client sends to a custom endpoint (MinIO, R2, ...). It keeps objects in memory and records each request
// (method, path, headers) so a test can see what the gateway sent. Signatures are recorded, not verified: what a
// test checks is that requests are signed with the configured key id and never carry the secret.

export interface FakeS3Request {
  method: string;
  path: string;
  headers: Record<string, string>;
}

export function startFakeS3() {
  const objects = new Map<string, { bytes: Uint8Array<ArrayBuffer>; type: string }>();
  const requests: FakeS3Request[] = [];
  const notFound = (key: string) =>
    new Response(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Key>${key}</Key></Error>`, {
      status: 404,
      headers: { "content-type": "application/xml" },
    });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = decodeURIComponent(new URL(req.url).pathname);
      requests.push({ method: req.method, path, headers: Object.fromEntries(req.headers) });
      const o = objects.get(path);
      switch (req.method) {
        case "PUT": {
          const bytes = new Uint8Array(await req.arrayBuffer());
          objects.set(path, { bytes, type: req.headers.get("content-type") ?? "application/octet-stream" });
          return new Response(null, { status: 200, headers: { etag: `"${Bun.hash(bytes).toString(16)}"` } });
        }
        case "HEAD":
          return o
            ? new Response(null, { headers: { "content-type": o.type, "content-length": String(o.bytes.length) } })
            : new Response(null, { status: 404 });
        case "GET":
          return o ? new Response(o.bytes, { headers: { "content-type": o.type } }) : notFound(path);
        case "DELETE":
          objects.delete(path);
          return new Response(null, { status: 204 });
        default:
          return new Response(null, { status: 405 });
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    /** objects by path-style path: /<bucket>/<key> */
    objects,
    requests,
    stop: () => server.stop(true),
  };
}
