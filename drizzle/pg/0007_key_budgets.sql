CREATE TABLE "key_budgets" (
	"key_id" text NOT NULL,
	"period" text NOT NULL,
	"period_start" bigint NOT NULL,
	"used" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "budget_hold" text;--> statement-breakpoint
CREATE UNIQUE INDEX "key_budgets_key_period" ON "key_budgets" USING btree ("key_id","period");