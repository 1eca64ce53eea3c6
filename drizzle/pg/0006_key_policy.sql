ALTER TABLE "api_keys" ADD COLUMN "models" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_day" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_week" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_month" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_lifetime" bigint;