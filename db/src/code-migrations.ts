import { getCreateIndexesSQL, getCreateTableSQL, getUpdateTimestampTriggerSQL } from '@agendajs/postgres-backend';
import type { Migration } from './migration.js';

/** The table Agenda keeps its jobs in (the backend's default name). */
export const AGENDA_JOBS_TABLE = 'agenda_jobs';

/**
 * Migrations whose SQL a library produces at run time. Agenda's PostgreSQL backend runs with
 * `ensureSchema: false` (several processes creating its tables at once collide), so its table,
 * indexes and trigger are created here, once, under the migration lock.
 */
export function codeMigrations(): Migration[] {
  return [
    {
      version: '0003_webhooks_agenda',
      sql: [
        getCreateTableSQL(AGENDA_JOBS_TABLE),
        ...getCreateIndexesSQL(AGENDA_JOBS_TABLE).map((s) => `${s};`),
        getUpdateTimestampTriggerSQL(AGENDA_JOBS_TABLE),
      ].join('\n'),
    },
  ];
}
