-- Synthetic data loaded by `pnpm energy seed` / the demo, so a database tells what in it is
-- generated, and an interrupted demo seed is finished on the next start instead of being
-- mistaken for real data.
create table seed_runs (
  id bigint generated always as identity primary key,
  seed bigint not null,
  from_time timestamptz not null,
  to_time timestamptz not null,
  purpose text not null check (purpose in ('seed', 'demo')),
  started_at timestamptz not null default now(),
  completed_at timestamptz
);
