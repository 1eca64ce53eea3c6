import type { Config } from "../config";
import { parseRateSpec } from "../settings";

// The dashboard's settings, read once from its rows of the settings table (src/settings.ts).

export interface DashboardSettings {
  /** LOGIN_RATE_LIMIT: sign-in attempts per email and client address */
  perEmail: { requests: number; windowSeconds: number };
  /** LOGIN_ADDRESS_RATE_LIMIT: sign-in attempts per client address across all emails */
  perAddress: { requests: number; windowSeconds: number };
  /** SESSION_TTL_HOURS */
  sessionTtlHours: number;
}

export function dashboardSettingsOf(config: Pick<Config, "raw">): DashboardSettings {
  return {
    perEmail: parseRateSpec(config.raw.LOGIN_RATE_LIMIT!),
    perAddress: parseRateSpec(config.raw.LOGIN_ADDRESS_RATE_LIMIT!),
    sessionTtlHours: Number(config.raw.SESSION_TTL_HOURS),
  };
}
