import { Users } from "../../src/dashboard/users";
import type { TestGateway } from "./gateway";

// Dashboard helpers: a user for an account, and a signed-in cookie + CSRF token obtained the way a browser does.
export const PASSWORD = "correct horse battery staple";

export async function dashboardUser(gw: TestGateway, credits = 1000) {
  const { accountId, key, keyId } = await gw.account(credits);
  const email = `user-${crypto.randomUUID().slice(0, 8)}@example.com`;
  await new Users(gw.ctx.db).create(accountId, email, PASSWORD);
  return { accountId, key, keyId, email };
}

export async function signIn(
  gw: TestGateway,
  email: string,
  password = PASSWORD,
): Promise<{ cookie: string; token: string; csrf: string }> {
  const r = await fetch(gw.url + "/dashboard/login", {
    method: "POST",
    body: new URLSearchParams({ email, password }),
    redirect: "manual",
  });
  if (r.status !== 303) throw new Error(`sign-in failed: ${r.status}`);
  const token = /sy_session=([^;]+)/.exec(r.headers.get("set-cookie") ?? "")![1]!;
  const cookie = `sy_session=${token}`;
  const page = await (await fetch(gw.url + "/dashboard/settings/api-keys", { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  return { cookie, token, csrf };
}
