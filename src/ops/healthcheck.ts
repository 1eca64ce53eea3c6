// `switchyard healthcheck`: for container health checks (the image has no curl). Asks this machine's gateway for
// /readyz on PORT (and HOST, unless it binds every interface) and exits 0 when it is ready, 1 otherwise.

export async function healthcheck(env: Record<string, string | undefined> = process.env): Promise<number> {
  const port = env.PORT || "3000";
  const host = !env.HOST || env.HOST === "0.0.0.0" || env.HOST === "::" ? "127.0.0.1" : env.HOST;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/readyz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    const body = await res.text();
    console.log(`${res.status} ${body}`);
    return res.status === 200 ? 0 : 1;
  } catch (e) {
    console.log(`${url}: ${(e as Error).message}`);
    return 1;
  }
}
