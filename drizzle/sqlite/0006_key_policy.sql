ALTER TABLE `api_keys` ADD `models` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_day` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_week` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_month` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budget_lifetime` integer;