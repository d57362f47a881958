-- Issue 15: the drain's claim reads due deliveries `order by next_attempt_at, id limit N`. The due index held
-- next_attempt_at alone, so when the planner's row estimate was low (a queue table changes faster than its
-- statistics: a burst of 10,000 deliveries is claimed before autovacuum analyses it) it chose a bitmap scan of every
-- pending row and a sort: 15 to 20 ms per claim of 50 with 9,000 pending, against about 1 ms for an index scan that
-- stops after N rows. With id in the index, the index order is the claim's order, whatever the estimate.
drop index webhook_deliveries_due_idx;
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at, id) where status = 'pending';
