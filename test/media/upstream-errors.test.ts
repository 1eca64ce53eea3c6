// The log keeps an upstream's error message with every credential-shaped part masked: keys in each provider's
// format, Authorization values and credentials in query strings. Ordinary words and short ids survive.
import { describe, expect, test } from "bun:test";
import {
  everyRouteRefusedMessage,
  maskSecrets,
  statusClass,
  upstreamFailedMessage,
} from "../../src/media/upstream-errors";

// Made-up keys in each provider's published format.
const SECRETS: Array<[string, string]> = [
  ["OpenAI project key", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90"],
  ["OpenAI legacy key", "sk-9f8e7d6c5b4a39281706f5e4d3c2b1a0AbCdEfGh"],
  ["Anthropic key", "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp-AAAAAAAA"],
  ["Replicate token", "r8_Gk3LmN0pQrStUvWxYz0123456789AbCdEf"],
  ["Gemini key", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"],
  ["fal key", "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b:9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"],
  ["kie key", "a1b2c3d4e5f60718293a4b5c6d7e8f90"],
  ["OpenAI organisation id", "org-AbCdEfGhIjKlMnOpQrStUvWx"],
];

describe("maskSecrets", () => {
  test.each(SECRETS)("masks a %s", (_name, secret) => {
    const masked = maskSecrets(`Incorrect API key provided: ${secret}. You can find your key in the dashboard.`);
    expect(masked).not.toContain(secret);
    expect(masked).not.toContain(secret.slice(6));
    expect(masked).toContain("Incorrect API key provided:");
    expect(masked).toContain("***");
  });

  test("masks bearer and fal-style Authorization values, keeping the scheme", () => {
    const masked = maskSecrets(
      'request had header "Authorization: Bearer abc.DEF-123_xyz~789" and Key 1234abcd:ffee0011',
    );
    expect(masked).toContain("Bearer ***");
    expect(masked).toContain("Key ***");
    expect(masked).not.toContain("abc.DEF-123_xyz~789");
    expect(masked).not.toContain("1234abcd:ffee0011");
  });

  test("masks key=, api_key= and token= query parameters, keeping the rest of the URL", () => {
    const masked = maskSecrets(
      "GET https://generativelanguage.googleapis.com/v1beta/files/x:download?alt=media&key=shortkey123 failed; token=t0k3n api_key=zzz",
    );
    expect(masked).toContain("?alt=media&key=***");
    expect(masked).not.toContain("shortkey123");
    expect(masked).toContain(" token=***");
    expect(masked).toContain(" api_key=***");
    expect(masked).not.toContain("t0k3n");
  });

  test("masks a credential given as a JSON field or a header line (an upstream echoing the request it refused)", () => {
    const masked = maskSecrets(
      '{"error":"bad config","api_key":"abcd1234efgh5678"}; x-api-key: 9f8e7d6c5b4a3210; "token": "t0k3nvalue"; https://x.example/f?X-Goog-Signature=5a6b7c8d&alt=media',
    );
    for (const secret of ["abcd1234efgh5678", "9f8e7d6c5b4a3210", "t0k3nvalue", "5a6b7c8d"])
      expect(masked).not.toContain(secret);
    expect(masked).toContain('"api_key":"***"');
    expect(masked).toContain("x-api-key: ***");
    expect(masked).toContain("X-Goog-Signature=***&alt=media");
  });

  test("leaves an ordinary message alone", () => {
    const text = "Your request was rejected as a result of our safety system (code 400, job 12345).";
    expect(maskSecrets(text)).toBe(text);
  });
});

describe("the customer's message", () => {
  test("names the upstream and the class of its status, never its text", () => {
    expect(statusClass("429")).toBe("HTTP 4xx");
    expect(statusClass("503")).toBe("HTTP 5xx");
    expect(statusClass("content_policy_violation")).toBe("generation error");
    expect(upstreamFailedMessage("fal", "422")).toBe(
      "The upstream (fal) failed the task (HTTP 4xx); nothing was charged.",
    );
    expect(
      everyRouteRefusedMessage([
        { provider: "veo", code: "429" },
        { provider: "fal", code: "network" },
      ]),
    ).toBe("Every upstream refused the task (veo: HTTP 4xx; fal: network error); nothing was charged.");
  });
});
