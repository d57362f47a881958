import { describe, expect, it } from '@jest/globals';
import { toHttpError } from '../../rest-facade/src/errors.js';
import { locatedError } from 'graphql';
import { conflict, DomainError, forbidden, invalid, isDatabaseUnavailable, notFound, unauthorized } from './errors.js';
import { errorExtensions } from './graphql-errors.js';

describe('domain error kinds, mapped by each surface', () => {
  it.each([
    [unauthorized(), 'UNAUTHENTICATED', 'unauthorized', 401],
    [unauthorized('Email or password is wrong.', 'invalid_credentials'), 'UNAUTHENTICATED', 'invalid_credentials', 401],
    [forbidden(), 'FORBIDDEN', 'forbidden', 403],
    [notFound('Post'), 'NOT_FOUND', 'not_found', 404],
    [invalid('invalid_input', 'name: too long', [{ field: 'name', message: 'too long' }]), 'BAD_USER_INPUT', 'invalid_input', 400],
    [conflict('handle_taken', 'Handle is taken.'), 'CONFLICT', 'handle_taken', 409],
    [new DomainError('unavailable', 'payments_not_configured', 'STRIPE_WEBHOOK_SECRET is not set.'), 'SERVICE_UNAVAILABLE', 'payments_not_configured', 503],
  ])('%#: GraphQL extensions and the REST status agree on %s', (error, graphqlCode, code, status) => {
    // GraphQL: the web app's code by kind, the domain's code as the reason; REST: the domain's code and the status.
    expect(errorExtensions(error)).toEqual({ code: graphqlCode, reason: code, status, ...(error.details ? { details: error.details } : {}) });
    const http = toHttpError(error);
    expect([http.status, http.code, http.message, http.details]).toEqual([status, code, error.message, error.details]);
  });

  it('carries no HTTP status itself', () => {
    expect(Object.keys(notFound())).not.toContain('status');
    expect(notFound('Tribe')).toMatchObject({ kind: 'not_found', code: 'not_found', message: 'Tribe not found.' });
  });
});

describe(isDatabaseUnavailable.name, () => {
  it('sees a dropped connection that graphql-js wrapped as a thrown non-Error value', () => {
    const bare = { errno: -104, code: 'ECONNRESET', syscall: 'read' };
    const wrapped = locatedError(bare, undefined, ['createPost']);
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
    expect(isDatabaseUnavailable(locatedError({ code: '23505' }, undefined, ['createPost']))).toBe(false);
  });
});
