import type { Response } from 'supertest';
import { documented, expectDocumented } from './openapi.js';

/**
 * docs/openapi.yaml describes every endpoint of the contract, and the check
 * the black-box tests run on each response can fail.
 */

const CONTRACT_ENDPOINTS: readonly [string, string, number][] = [
  ['POST', '/v1/oauth2/token', 200],
  ['POST', '/v1/oauth2/revocations', 200],
  ['POST', '/v1/oauth2/introspections', 200],
  ['GET', '/.well-known/oauth-authorization-server', 200],
  ['GET', '/v1/users', 200],
  ['GET', '/v1/users/search', 200],
  ['GET', '/v1/users/4611686018427387911', 200],
  ['HEAD', '/v1/users', 200],
  ['HEAD', '/v1/users/search', 200],
  ['HEAD', '/v1/users/4611686018427387911', 200],
  ['POST', '/v1/users', 201],
  ['PUT', '/v1/users/4611686018427387911', 200],
  ['PATCH', '/v1/users/4611686018427387911', 200],
  ['DELETE', '/v1/users/4611686018427387911', 204],
  ['GET', '/v1/me', 200],
  ['POST', '/v1/exports', 202],
  ['GET', '/v1/exports/0b6f2a52-3b8e-4d43-9a0e-41c1d5f7a7c1', 202],
  ['GET', '/v1/exports/0b6f2a52-3b8e-4d43-9a0e-41c1d5f7a7c1', 200],
  ['POST', '/v1/sessions', 201],
  ['GET', '/v1/sessions/current', 200],
  ['DELETE', '/v1/sessions/current', 204],
];

const fakeResponse = (method: string, path: string, status: number, body: unknown): Response =>
  ({ req: { method, path }, status, body, text: JSON.stringify(body), headers: {} }) as unknown as Response;

describe('docs/openapi.yaml', () => {
  it.each(CONTRACT_ENDPOINTS)('documents %s %s with its success status %i', (method, path, status) => {
    expect(() => documented(method, path, status)).not.toThrow();
  });

  it('takes /v1/users/search for the search, not for a user id', () => {
    expect(documented('GET', '/v1/users/search', 200).template).toBe('/v1/users/search');
  });

  describe('the response check', () => {
    it('refuses a status the operation does not document', () => {
      expect(() => expectDocumented(fakeResponse('GET', '/v1/users', 418, {}))).toThrow('does not document status 418');
    });

    it('refuses a body that breaks the schema', () => {
      const body = { users: [{ id: 1, name: 'x' }], hasNext: 'yes' };
      expect(() => expectDocumented(fakeResponse('GET', '/v1/users', 200, body))).toThrow('does not match docs/openapi.yaml');
    });

    it('accepts a body that follows the schema', () => {
      expect(() => expectDocumented(fakeResponse('GET', '/v1/users', 200, { users: [], hasNext: false }))).not.toThrow();
    });
  });
});
