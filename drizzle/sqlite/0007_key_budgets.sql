CREATE TABLE `key_budgets` (
	`key_id` text NOT NULL,
	`period` text NOT NULL,
	`period_start` integer NOT NULL,
	`used` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `key_budgets_key_period` ON `key_budgets` (`key_id`,`period`);--> statement-breakpoint
ALTER TABLE `tasks` ADD `budget_hold` text;