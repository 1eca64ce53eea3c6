CREATE TABLE "idempotency_keys" (
	"account_id" text NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"state" text NOT NULL,
	"status" bigint,
	"content_type" text,
	"body" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "key_budgets" (
	"key_id" text NOT NULL,
	"period" text NOT NULL,
	"period_start" bigint NOT NULL,
	"used" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "models" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_day" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_week" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_month" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budget_lifetime" bigint;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "budget_hold" text;--> statement-breakpoint
CREATE UNIQUE INDEX "idempotency_keys_account_key" ON "idempotency_keys" USING btree ("account_id","key");--> statement-breakpoint
CREATE UNIQUE INDEX "key_budgets_key_period" ON "key_budgets" USING btree ("key_id","period");