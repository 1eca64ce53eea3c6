import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { MIN_PASSWORD_LENGTH, Users } from "./users";
import { routeGuards } from "../http/guards";
import { errorCodes } from "../http/route-docs";

// The operator creates dashboard users (admin API here; CLI `user:create`). There is no self sign-up.

const UserView = t.Object(
  {
    id: t.String(),
    account_id: t.String(),
    email: t.String(),
    created_at: t.String({ format: "date-time" }),
  },
  {
    examples: [
      { id: "user_AZXk…", account_id: "acct_AZXj…", email: "ada@example.com", created_at: "2026-01-31T14:05:09.000Z" },
    ],
  },
);

export function dashboardAdminRoutes(ctx: AppContext) {
  const users = new Users(ctx.db);
  return new Elysia({
    name: "dashboard-admin",
    prefix: "/admin/v1",
    detail: { tags: ["Admin"], security: [{ adminToken: [] }] },
  })
    .use(routeGuards(ctx))
    .post(
      "/accounts/:id/users",
      async ({ params, body, set }) => {
        const user = await users.create(params.id, body.email, body.password);
        ctx.log.info("dashboard user created", { account_id: params.id, user_id: user.id });
        set.status = 201;
        return user;
      },
      {
        admin: true,
        body: t.Object(
          {
            email: t.String({
              minLength: 3,
              maxLength: 320,
              description: "Sign-in email (stored lower-case; unique).",
            }),
            password: t.String({
              minLength: MIN_PASSWORD_LENGTH,
              maxLength: 200,
              description: "Hashed with argon2id; never stored or logged in clear.",
            }),
          },
          { examples: [{ email: "ada@example.com", password: "correct horse battery staple" }] },
        ),
        response: { 201: UserView },
        detail: {
          summary: "Create a dashboard user (email + password) for an account",
          ...errorCodes({ 404: ["not_found"], 409: ["email_taken"] }),
        },
      },
    );
}
