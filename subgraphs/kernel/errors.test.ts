import { describe, expect, it } from '@jest/globals';
import { toHttpError } from '../../rest-facade/src/errors.js';
import { conflict, DomainError, forbidden, invalid, notFound, unauthorized } from './errors.js';
import { errorExtensions } from './graphql-errors.js';

describe('domain error kinds, mapped by each surface', () => {
  it.each([
    [unauthorized(), 'unauthorized', 401],
    [unauthorized('Email or password is wrong.', 'invalid_credentials'), 'invalid_credentials', 401],
    [forbidden(), 'forbidden', 403],
    [notFound('Post'), 'not_found', 404],
    [invalid('invalid_input', 'name: too long', [{ field: 'name', message: 'too long' }]), 'invalid_input', 400],
    [conflict('handle_taken', 'Handle is taken.'), 'handle_taken', 409],
    [new DomainError('unavailable', 'payments_not_configured', 'STRIPE_WEBHOOK_SECRET is not set.'), 'payments_not_configured', 503],
  ])('%#: GraphQL extensions and the REST status agree on %s', (error, code, status) => {
    expect(errorExtensions(error)).toEqual({ code, status, ...(error.details ? { details: error.details } : {}) });
    const http = toHttpError(error);
    expect([http.status, http.code, http.message, http.details]).toEqual([status, code, error.message, error.details]);
  });

  it('carries no HTTP status itself', () => {
    expect(Object.keys(notFound())).not.toContain('status');
    expect(notFound('Tribe')).toMatchObject({ kind: 'not_found', code: 'not_found', message: 'Tribe not found.' });
  });
});
