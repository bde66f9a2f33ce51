import request from 'supertest';
import { basic, tokenApp } from './support/oauth2.js';

/**
 * What Schemathesis, driven by docs/openapi.yaml, found on the token
 * service (issue 31): the revocation and introspection documents say
 * `token` has `minLength: 1` and that a repeated parameter is refused, and
 * the endpoints do what they say. (Schemathesis itself is Python and does
 * not run here; these are its cases.)
 */

const DEMO = basic('demo-client', 'demo-secret');
// The demo client may introspect its own tokens: the refusals below are about the request, not the caller.
const app = () => tokenApp({ introspectors: { 'demo-client': 'own-tokens' } });

describe.each([
  ['revocation (RFC 7009)', '/v1/oauth2/revocations'],
  ['introspection (RFC 7662)', '/v1/oauth2/introspections'],
])('%s', (_name, path) => {
  it('refuses an empty token with 400 invalid_request', async () => {
    const res = await request(await app())
      .post(path)
      .type('form')
      .set('Authorization', DEMO)
      .send('token=');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('refuses a repeated parameter with 400 invalid_request (RFC 6749 §3.2)', async () => {
    const res = await request(await app())
      .post(path)
      .type('form')
      .set('Authorization', DEMO)
      .send('token=a&token=b');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('docs/openapi.yaml says so', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the document's JSON, read by hand.
  const doc: any = require('yaml').parse(require('node:fs').readFileSync(`${__dirname}/../docs/openapi.yaml`, 'utf8'));

  it.each(['/v1/oauth2/revocations', '/v1/oauth2/introspections'])(
    '%s: token has minLength 1; a repeated parameter is refused',
    (path) => {
      const operation = doc.paths[path].post;
      expect(operation.description).toMatch(/repeated one \(`token=a&token=b`\) is refused with 400\s+`invalid_request`/);
      const ref: string = operation.requestBody.content['application/x-www-form-urlencoded'].schema.$ref;
      expect(doc.components.schemas[ref.split('/').pop() as string].properties.token.minLength).toBe(1);
    },
  );

  it('POST /v1/exports lists 429 (the per-caller export cap) and 503 (the service’s)', () => {
    expect(Object.keys(doc.paths['/v1/exports'].post.responses)).toEqual(expect.arrayContaining(['429', '503']));
  });
});
