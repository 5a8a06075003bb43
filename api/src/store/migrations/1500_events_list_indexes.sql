-- Reads at scale (issue 31): the events list filtered by event type reads an index in id order
-- instead of walking the shop's events until a page of that type turns up (with a million events
-- and a rare type, most of them). The state filter already has events_shop_state (0300); a
-- filter by state and type reads the more selective of the two. One index more per accepted
-- event (about 1.5 µs of intake, ADR 0304); `npm run bench:reads` has the figures.
CREATE INDEX events_shop_type ON events (shop_id, event_type, id);
