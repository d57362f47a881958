-- Courses, challenges, wins, affiliate codes, and the checkout core of orders (issue 5).
-- Money is integer cents with an ISO 4217 currency; a paid item has a positive price.

-- Courses: modules hold lessons; an enrollment tracks one member's lesson completions.
create table courses (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  title text not null check (char_length(title) between 1 and 200),
  description text not null default '',
  access_type text not null check (access_type in ('free', 'paid', 'members_only')),
  price_cents integer not null default 0 check (price_cents >= 0),
  currency text not null default 'BRL' check (currency ~ '^[A-Z]{3}$'),
  xp_reward integer not null default 0 check (xp_reward >= 0),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((access_type = 'paid') = (price_cents > 0))
);
create index courses_community_created_idx on courses (community_id, created_at desc, id desc);

create table course_modules (
  id uuid primary key default gen_random_uuid(),
  course_id uuid not null references courses (id) on delete cascade,
  title text not null check (char_length(title) between 1 and 200),
  position integer not null check (position >= 0),
  created_at timestamptz not null default now()
);
create index course_modules_course_idx on course_modules (course_id, position, created_at, id);

create table course_lessons (
  id uuid primary key default gen_random_uuid(),
  course_id uuid not null references courses (id) on delete cascade,
  module_id uuid not null references course_modules (id) on delete cascade,
  title text not null check (char_length(title) between 1 and 200),
  content text not null default '',
  position integer not null check (position >= 0),
  created_at timestamptz not null default now()
);
create index course_lessons_module_idx on course_lessons (module_id, position, created_at, id);
create index course_lessons_course_idx on course_lessons (course_id);

-- An enrollment exists once access is granted (at once when not paid, when the order is paid otherwise).
create table course_enrollments (
  id uuid primary key default gen_random_uuid(),
  course_id uuid not null references courses (id) on delete cascade,
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  status text not null default 'active' check (status in ('active', 'completed')),
  order_id uuid references orders (id) on delete set null,
  enrolled_at timestamptz not null default now(),
  completed_at timestamptz,
  last_accessed_at timestamptz not null default now(),
  unique (course_id, user_id)
);
create index course_enrollments_user_idx on course_enrollments (user_id);

create table lesson_completions (
  enrollment_id uuid not null references course_enrollments (id) on delete cascade,
  lesson_id uuid not null references course_lessons (id) on delete cascade,
  completed_at timestamptz not null default now(),
  primary key (enrollment_id, lesson_id)
);
create index lesson_completions_lesson_idx on lesson_completions (lesson_id);

-- Challenges: daily check-ins over duration_days; progress is kept on the enrollment so the leaderboard
-- is one indexed read.
create table challenges (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  title text not null check (char_length(title) between 1 and 200),
  description text not null default '',
  duration_days integer not null check (duration_days between 1 and 365),
  challenge_type text not null check (challenge_type in ('daily', 'weekly', 'custom')),
  access_type text not null check (access_type in ('free', 'paid', 'members_only')),
  price_cents integer not null default 0 check (price_cents >= 0),
  currency text not null default 'BRL' check (currency ~ '^[A-Z]{3}$'),
  xp_reward integer not null default 0 check (xp_reward >= 0),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((access_type = 'paid') = (price_cents > 0))
);
create index challenges_community_created_idx on challenges (community_id, created_at desc, id desc);

create table challenge_enrollments (
  id uuid primary key default gen_random_uuid(),
  challenge_id uuid not null references challenges (id) on delete cascade,
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  status text not null default 'active' check (status in ('active', 'completed')),
  order_id uuid references orders (id) on delete set null,
  -- Day N of this enrollment opens at started_at + (N - 1) * 24 h.
  started_at timestamptz not null,
  completed_days integer not null default 0 check (completed_days >= 0),
  -- Consecutive checked-in days ending at last_checkin_day (the highest day checked in).
  streak_run integer not null default 0 check (streak_run >= 0),
  last_checkin_day integer,
  last_checkin_at timestamptz,
  xp_earned integer not null default 0 check (xp_earned >= 0),
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  unique (challenge_id, user_id)
);
create index challenge_enrollments_leaderboard_idx
  on challenge_enrollments (challenge_id, completed_days desc, xp_earned desc, last_checkin_at asc nulls last, id);
create index challenge_enrollments_user_idx on challenge_enrollments (user_id);

create table challenge_checkins (
  id uuid primary key default gen_random_uuid(),
  enrollment_id uuid not null references challenge_enrollments (id) on delete cascade,
  challenge_id uuid not null references challenges (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  day_number integer not null check (day_number >= 1),
  content text not null,
  tags text[] not null default '{}' check (cardinality(tags) <= 10),
  xp_awarded integer not null default 0,
  created_at timestamptz not null default now(),
  unique (enrollment_id, day_number)
);

-- Wins: a member posts one; a moderator or above approves it.
create table wins (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  author_id uuid references users (id) on delete set null,
  title text not null check (char_length(title) between 1 and 140),
  content text not null default '',
  status text not null default 'pending' check (status in ('pending', 'approved')),
  approved_by uuid references users (id) on delete set null,
  approved_at timestamptz,
  created_at timestamptz not null default now()
);
create index wins_community_created_idx on wins (community_id, created_at desc, id desc);

-- Affiliate codes: one per member per tribe; a click per accepted POST /affiliate/track.
create table affiliate_codes (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  code text not null unique,
  created_at timestamptz not null default now(),
  unique (community_id, user_id)
);

create table affiliate_clicks (
  id uuid primary key default gen_random_uuid(),
  code_id uuid not null references affiliate_codes (id) on delete cascade,
  community_id uuid not null references communities (id) on delete cascade,
  created_at timestamptz not null default now()
);
create index affiliate_clicks_code_idx on affiliate_clicks (code_id, created_at);

-- Checkout: at most one pending order per buyer and item, so a repeated enroll returns the same order.
create unique index orders_pending_item_key on orders (buyer_id, product_type, product_id) where status = 'pending';
