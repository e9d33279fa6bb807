-- The rows of a period, whichever meter: every write recomputes the rollups of the periods it
-- touched (`delete ... where level = $1 and start >= $2 and start < $3`), and a read of every
-- meter over a window asks the same. The key leads with the meter, so both scanned the whole
-- level: on 200 meters over five years (9 million rollup rows) one hour's recomputation read the
-- table from end to end, 3.5 s, and grew with the history.
create index data_rollup_period_idx on data_rollup (level, start);
