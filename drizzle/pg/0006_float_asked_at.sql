ALTER TABLE "holds" ADD COLUMN "asked_at" bigint;--> statement-breakpoint
CREATE INDEX "holds_asked" ON "holds" USING btree ("asked_at") WHERE asked_at is not null and status = 'pending';