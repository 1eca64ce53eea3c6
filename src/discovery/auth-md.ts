import { WEBHOOK_TOLERANCE_SECONDS } from "../media/callback-signing";

// /auth.md: how to authenticate and how to check a task callback, for agents and people. The TypeScript example
// is run by a test against signatures made by node:crypto, so it cannot drift from the scheme the gateway signs with.

export function renderAuthMd(baseUrl: string): string {
  return `# Authenticating to Switchyard

Base URL: \`${baseUrl}\`

${apiKeysSection(baseUrl)}${webhookSection()}${verifyExample()}${moreSection(baseUrl)}`;
}

function apiKeysSection(baseUrl: string): string {
  return `## API keys

Every protected request carries one API key, in either header:

\`\`\`http
Authorization: Bearer <API_KEY>
x-api-key: <API_KEY>
\`\`\`

Keys look like \`sk-sy-…\`. They come from:

- the **dashboard**: ${baseUrl}/dashboard → **Settings → API Keys** (sign in with the email and password your operator gave you);
- or, for operators, the **admin API** (\`POST /admin/v1/accounts/{id}/keys\` with \`Authorization: Bearer $ADMIN_TOKEN\`)
  or the **CLI** (\`switchyard cli key:create ACCOUNT_ID --name NAME\`).

A key is shown **once**, when it is created; the gateway stores only its hash. Revoking a key refuses it within seconds.

**Keys never go into browser or mobile code.** Anything shipped to a browser or an app can be read by its users. Call
the gateway from your server and give your clients your own session, not the key.

No key is needed for: \`GET /v1/models\`, \`/openapi.json\`, \`/.well-known/api-catalog\`, \`/auth.md\`, \`/docs\`,
\`/pricing\`, \`/llms.txt\`, \`/healthz\`, \`/readyz\`.

Failures: a missing, unknown or revoked key answers **401** (\`invalid_api_key\`); too many requests answer **429** with
\`retry-after\` (seconds). Errors on \`/v1/messages\` use the Anthropic error shape, on \`/api/v1/jobs/*\` the
\`{code, msg, data}\` envelope, everywhere else \`{"error": {"message", "type", "code", "param"}, "request_id"}\`.

`;
}

function webhookSection(): string {
  return `## Webhook signatures (task callbacks)

When a media task created with \`callBackUrl\` (or \`callback_url\`) reaches \`success\` or \`fail\`, the gateway POSTs
the task record to that URL. When your account has a **webhook signing key** (dashboard **Settings → Webhooks**,
shown once when generated or rotated; operators: \`POST /admin/v1/accounts/{id}/webhook-key\`), every callback carries:

| Header | Value |
|---|---|
| \`X-Webhook-Timestamp\` | Unix time in whole seconds when the callback was sent |
| \`X-Webhook-Signature\` | base64 of HMAC-SHA256 over \`<taskId>.<timestamp>\`, keyed with the signing key (the whole \`whsec_…\` string as UTF-8) |

\`taskId\` is the \`taskId\` field of the JSON body. To verify: recompute the HMAC, compare it in **constant time**, and
refuse timestamps more than ${WEBHOOK_TOLERANCE_SECONDS / 60} minutes from your clock (that stops replays of old callbacks).
The signing key, like an API key, stays on your server.

`;
}

function verifyExample(): string {
  return `\`\`\`ts
import { timingSafeEqual } from "node:crypto";

const TOLERANCE_SECONDS = ${WEBHOOK_TOLERANCE_SECONDS};

/** True when a Switchyard callback is authentic and fresh. Works in Node 18+, Bun and Deno. */
export async function verifySwitchyardWebhook(
  signingKey: string,
  taskId: string,
  timestamp: string | null,
  signature: string | null,
  nowMs: number = Date.now(),
): Promise<boolean> {
  if (!timestamp || !signature || !/^\\d+$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(signingKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(\`\${taskId}.\${timestamp}\`)));
  const given = Buffer.from(signature, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

// In your callback handler:
//   const body = await request.json();
//   const ok = await verifySwitchyardWebhook(process.env.SWITCHYARD_WEBHOOK_KEY!, body.taskId,
//     request.headers.get("x-webhook-timestamp"), request.headers.get("x-webhook-signature"));
//   if (!ok) return new Response("bad signature", { status: 401 });
\`\`\`

`;
}

function moreSection(baseUrl: string): string {
  return `## More

- OpenAPI 3.1 description: ${baseUrl}/openapi.json (security schemes \`bearer\`, \`apiKey\`, \`adminToken\`)
- API reference: ${baseUrl}/docs
- API catalog (RFC 9727): ${baseUrl}/.well-known/api-catalog
`;
}
