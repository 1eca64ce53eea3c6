CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`state` text NOT NULL,
	`status` integer,
	`content_type` text,
	`body` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idempotency_keys_account_key` ON `idempotency_keys` (`account_id`,`key`);--> statement-breakpoint
CREATE TABLE `key_budgets` (
	`key_id` text NOT NULL,
	`period` text NOT NULL,
	`period_start` integer NOT NULL,
	`used` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `key_budgets_key_period` ON `key_budgets` (`key_id`,`period`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `models` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_day` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_week` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_month` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_lifetime` integer;--> statement-breakpoint
ALTER TABLE `tasks` ADD `budget_hold` text;