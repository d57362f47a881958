-- Issue 29: sign-in throttling (subgraphs/identity/sign-in-throttle.ts). One row per counter: an account from one
-- address, an account from every address, or one address; `key` is the SHA-256 (hex) of the counter's name, so no
-- email or address is stored. A fixed window per counter: it starts at the first attempt counted after the previous
-- window ended (`window_start`), and `attempts` counts the attempts in it that did not prove the password. Shared by
-- every process through this table.
create table sign_in_attempts (
  key text primary key,
  window_start timestamptz not null,
  attempts integer not null
);
create index sign_in_attempts_window_start_idx on sign_in_attempts (window_start);
