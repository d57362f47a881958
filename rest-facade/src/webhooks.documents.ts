/** Fixed GraphQL documents of the webhook routes (control plane and resource API); the tribe by id or handle. */

import { restDocument } from './typed-document.js';

const ENDPOINT = 'id community { id } url events description enabled secret createdAt updatedAt';
const DELIVERY = 'id endpointId event status attempts responseStatus responseTimeMs lastError nextAttemptAt deliveredAt createdAt body';
const TRIBE_VARS = '$communityId: ID, $handle: String';
const TRIBE_ARGS = 'communityId: $communityId, handle: $handle';

export const WebhookDocs = {
  list: restDocument(`query WebhookEndpoints(${TRIBE_VARS}) { webhookEndpoints(${TRIBE_ARGS}) { ${ENDPOINT} } webhookEventTypes }`),
  get: restDocument(`query WebhookEndpoint(${TRIBE_VARS}, $id: ID!) { webhookEndpoint(${TRIBE_ARGS}, id: $id) { ${ENDPOINT} } }`),
  create: restDocument(`mutation CreateWebhookEndpoint(${TRIBE_VARS}, $input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(${TRIBE_ARGS}, input: $input) { ${ENDPOINT} } }`),
  update: restDocument(`mutation UpdateWebhookEndpoint(${TRIBE_VARS}, $id: ID!, $input: UpdateWebhookEndpointInput!) {
    updateWebhookEndpoint(${TRIBE_ARGS}, id: $id, input: $input) { ${ENDPOINT} } }`),
  delete: restDocument(`mutation DeleteWebhookEndpoint(${TRIBE_VARS}, $id: ID!) { deleteWebhookEndpoint(${TRIBE_ARGS}, id: $id) }`),
  test: restDocument(`mutation TestWebhookEndpoint(${TRIBE_VARS}, $id: ID!) {
    testWebhookEndpoint(${TRIBE_ARGS}, id: $id) { ok statusCode responseTimeMs error delivery { ${DELIVERY} } } }`),
  deliveries: restDocument(`query WebhookDeliveries(${TRIBE_VARS}, $endpointId: ID!, $page: Int, $perPage: Int) {
    webhookDeliveries(${TRIBE_ARGS}, endpointId: $endpointId, page: $page, perPage: $perPage) { items { ${DELIVERY} } page perPage hasMore } }`),
  resend: restDocument(`mutation ResendWebhookDelivery(${TRIBE_VARS}, $endpointId: ID!, $deliveryId: ID!) {
    resendWebhookDelivery(${TRIBE_ARGS}, endpointId: $endpointId, deliveryId: $deliveryId) { ${DELIVERY} } }`),
} as const;
