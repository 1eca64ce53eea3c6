import { parseArgs } from "node:util";
import { accountView } from "./accounts/views";
import { closeContext, createContext } from "./bootstrap";
import { ConfigError, loadConfig } from "./config";
import type { AppContext } from "./context";
import { Users } from "./dashboard/users";
import { ApiError } from "./http/errors";
import { BUDGET_PERIODS, newKeyPolicy, parseKeyPolicy } from "./accounts/policy";
import { SWEPT_HOLD_KINDS } from "./ledger/service";
import { creditsToMicros, microsToCredits } from "./ledger/units";
import { silentLogger } from "./log";
import { CatalogError } from "./catalog/service";
import { loadCatalog } from "./catalog-loader";
import { checkCatalog } from "./catalog/drift";

// Operator commands at a shell, printing JSON. They open the same database as the server (DATABASE_URL), so they
// work without ADMIN_TOKEN and while the server runs.

const usage = `Usage: bun run cli <command> [options]   (or: switchyard cli <command>)
  account:create --name NAME [--credits N]        create an account (prints its id)
  account:show ACCOUNT_ID                         balance, pending holds, ledger, keys
  accounts                                        list accounts
  key:create ACCOUNT_ID [--name N] [--requests N --window S] [--max-tasks N] [policy]
                                                  create an API key (printed once)
  key:update ACCOUNT_ID KEY_ID [--name N] [--requests N --window S | --requests default] [--max-tasks N|default] [policy]
                                                  change a key (only what is given)
    policy: [--models ID,claude-*,…|all] [--expires 2027-01-31T00:00:00Z|never]
            [--budget-day N|none] [--budget-week N|none] [--budget-month N|none] [--budget-lifetime N|none]   (credits)
  key:revoke ACCOUNT_ID KEY_ID                    revoke a key
  credits:add ACCOUNT_ID --credits N [--reason R] [--correction]
                                                  top up; with --correction N may be negative (--credits=-5)
  webhook-key ACCOUNT_ID                          generate or rotate the webhook signing key (printed once)
  secrets:reseal                                  seal stored webhook signing keys with SECRETS_KEY's first key
  user:create ACCOUNT_ID --email E --password P   create a dashboard user (sign-in at /dashboard)
  ledger:check [ACCOUNT_ID]                       recompute balances and usage entries; exit 1 on a mismatch
  holds:sweep                                     release expired LLM holds and floats now (not media tasks')
  catalog:check                                   compare the catalog with each configured provider's model list;
                                                  exit 1 when a model is missing, no longer served or differs`;

type Command = (ctx: AppContext, args: string[], o: Record<string, any>) => Promise<unknown>;

const commands: Record<string, Command> = {
  "account:create": async (ctx, _a, o) => {
    if (!o.name) throw new ApiError(422, "invalid_request", "--name is required");
    const a = await ctx.accounts.createAccount(o.name, o.credits ? creditsToMicros(o.credits) : 0);
    return accountView(ctx, a.id);
  },
  "account:show": (ctx, [id]) => accountView(ctx, need(id, "ACCOUNT_ID"), { withLedger: true }),
  accounts: async (ctx) => ({ data: await ctx.accounts.listAccounts() }),
  "key:create": (ctx, [id], o) => {
    const { models, expiresAt, budget } = newKeyPolicy(parseKeyPolicy(policyFlags(o), Date.now()));
    return ctx.accounts.createKey(need(id, "ACCOUNT_ID"), {
      name: o.name,
      rateRequests: o.requests ? int(o.requests, "--requests") : undefined,
      rateWindowSeconds: o.window ? int(o.window, "--window") : undefined,
      maxConcurrentTasks: o["max-tasks"] ? int(o["max-tasks"], "--max-tasks") : undefined,
      models,
      expiresAt,
      budget,
    });
  },
  "key:update": (ctx, [id, keyId], o) => {
    const input: Record<string, unknown> = policyFlags(o);
    if (o.name !== undefined) input.name = o.name;
    if (o.requests === "default") input.rate_limit = null;
    else if (o.requests !== undefined || o.window !== undefined)
      input.rate_limit = { requests: o.requests, window_seconds: o.window };
    if (o["max-tasks"] !== undefined) input.max_concurrent_tasks = o["max-tasks"] === "default" ? null : o["max-tasks"];
    // The operator's request count is unbounded here as in key:create (accounts/model.ts KEY_LIMITS).
    const change = parseKeyPolicy(input, Date.now(), { requestsMax: Number.MAX_SAFE_INTEGER });
    return ctx.accounts.updateKey(need(id, "ACCOUNT_ID"), need(keyId, "KEY_ID"), change);
  },
  "key:revoke": (ctx, [id, keyId]) => ctx.accounts.revokeKey(need(id, "ACCOUNT_ID"), need(keyId, "KEY_ID")),
  "credits:add": async (ctx, [id], o) => {
    const micros = creditsToMicros(need(o.credits, "--credits"));
    if (micros < 0 && !o.correction) throw new ApiError(422, "invalid_request", "negative amounts need --correction");
    const b = await ctx.ledger.credit(
      need(id, "ACCOUNT_ID"),
      micros,
      o.correction ? "correction" : "topup",
      o.reason ?? (o.correction ? "correction" : "topup"),
    );
    return { account_id: id, credits: microsToCredits(b.available), held_credits: microsToCredits(b.held) };
  },
  "webhook-key": (ctx, [id]) => ctx.accounts.rotateWebhookKey(need(id, "ACCOUNT_ID")),
  "secrets:reseal": (ctx) => ctx.accounts.resealWebhookSecrets(),
  "user:create": (ctx, [id], o) =>
    new Users(ctx.db).create(need(id, "ACCOUNT_ID"), need(o.email, "--email"), need(o.password, "--password")),
  "ledger:check": async (ctx, [id]) => {
    if (id !== undefined && !(await ctx.ledger.balance(id)))
      throw new ApiError(404, "account_not_found", `No account ${id}.`);
    const mismatches = await ctx.ledger.check(id);
    if (mismatches.length) process.exitCode = 1;
    return { ok: mismatches.length === 0, mismatches };
  },
  "holds:sweep": async (ctx) => ({ released: await ctx.ledger.sweepExpired(Date.now(), SWEPT_HOLD_KINDS) }),
};

/** The policy flags of key:create and key:update in the JSON shape parseKeyPolicy reads (the admin API's). */
function policyFlags(o: Record<string, any>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  if (o.models !== undefined)
    input.models =
      o.models === "all"
        ? null
        : String(o.models)
            .split(",")
            .map((m) => m.trim());
  if (o.expires !== undefined) input.expires_at = o.expires === "never" ? null : o.expires;
  const budget: Record<string, unknown> = {};
  for (const p of BUDGET_PERIODS)
    if (o[`budget-${p}`] !== undefined) budget[p] = o[`budget-${p}`] === "none" ? null : o[`budget-${p}`];
  if (Object.keys(budget).length) input.budget = budget;
  return input;
}

// Commands that need no database (and so run where only the provider keys are set).
const standalone: Record<string, (config: ReturnType<typeof loadConfig>) => Promise<unknown>> = {
  "catalog:check": async (config) => {
    const report = await checkCatalog(loadCatalog(config.catalogPath, config.catalogDay), config.raw);
    if (!report.ok) process.exitCode = 1;
    return report;
  },
};

function need(v: string | undefined, name: string): string {
  if (!v) throw new ApiError(422, "invalid_request", `${name} is required`);
  return v;
}
function int(v: string, name: string): number {
  if (!/^\d+$/.test(v) || +v < 1) throw new ApiError(422, "invalid_request", `${name} must be a positive whole number`);
  return +v;
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "help" || name === "--help" || name === "-h") {
    console.log(usage);
    return 0;
  }
  const command = name ? commands[name] : undefined;
  const alone = name ? standalone[name] : undefined;
  if (!command && !alone) {
    console.error(usage);
    return name ? 2 : 0;
  }
  let ctx: AppContext | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        name: { type: "string" },
        credits: { type: "string" },
        requests: { type: "string" },
        window: { type: "string" },
        "max-tasks": { type: "string" },
        reason: { type: "string" },
        correction: { type: "boolean" },
        email: { type: "string" },
        password: { type: "string" },
        models: { type: "string" },
        expires: { type: "string" },
        "budget-day": { type: "string" },
        "budget-week": { type: "string" },
        "budget-month": { type: "string" },
        "budget-lifetime": { type: "string" },
      },
    });
    if (alone) {
      console.log(JSON.stringify(await alone(loadConfig()), null, 2));
      return typeof process.exitCode === "number" ? process.exitCode : 0;
    }
    // No Redis: no command limits requests or takes task tokens, and an operator must be able to run these while
    // Redis is down.
    ctx = await createContext(loadConfig(), silentLogger, { redis: false, poolSize: 2 }); // one command at a time
    console.log(JSON.stringify(await command!(ctx, positionals, values), null, 2));
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (e) {
    const known =
      e instanceof ApiError ||
      e instanceof ConfigError ||
      e instanceof CatalogError ||
      e instanceof RangeError ||
      (e as any)?.code?.startsWith?.("ERR_PARSE_ARGS");
    const message = known ? (e as Error).message : String(e);
    console.error(JSON.stringify({ error: message }));
    return 1;
  } finally {
    if (ctx) await closeContext(ctx);
  }
}

if (import.meta.main) process.exitCode = await runCli(process.argv.slice(2));
