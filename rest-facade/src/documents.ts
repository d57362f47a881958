import { ApiKeyDocs } from './application/api-keys.js';
import { PersonalKeyDocs } from './application/personal-keys.js';
import { AppDocs } from './application/router.js';
import { PlatformDocs } from './platform/documents.js';
import { ChallengeDocs } from './resource/challenges.js';
import { CourseDocs } from './resource/courses.js';
import { Docs } from './resource/documents.js';
import { EventDocs } from './resource/events.js';
import { WebhookDocs } from './webhooks.documents.js';

const named = (prefix: string, docs: Record<string, string>) =>
  Object.fromEntries(Object.entries(docs).map(([name, doc]) => [`${prefix}.${name}`, doc]));

/**
 * Every fixed GraphQL document the REST facade runs through the gateway, by a stable name. The persisted-operation
 * manifest (`npm run persisted`) and the GraphQL limits test read this list: a new document belongs here.
 */
export const REST_DOCUMENTS: Readonly<Record<string, string>> = Object.freeze({
  ...named('application', AppDocs),
  ...named('apiKeys', ApiKeyDocs),
  ...named('personalKeys', PersonalKeyDocs),
  ...named('platform', PlatformDocs),
  ...named('resource', Docs),
  ...named('events', EventDocs),
  ...named('learning', { ...CourseDocs, ...ChallengeDocs }),
  ...named('webhooks', WebhookDocs),
});
