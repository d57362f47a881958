-- A moderator's WARN is also a notification of the warned user (issue 13): the notification kinds widen with
-- `moderation_warning`.
alter table notifications drop constraint notifications_kind_check;
alter table notifications add constraint notifications_kind_check check (kind in ('reply', 'mention', 'reaction',
  'event_created', 'event_reminder', 'role_changed', 'win_approved', 'course_completed', 'message', 'moderation_warning'));
