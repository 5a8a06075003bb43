-- The copies intake suppressed as duplicates of an event (issue 42: an event's detail says how many
-- times its sender event reached Flow and which copies were suppressed, reads/sender-event.ts).
-- Partial: only suppressed copies carry duplicate_of, so accepted events never write this index.
CREATE INDEX events_duplicates ON events (duplicate_of, id) WHERE duplicate_of IS NOT NULL;
