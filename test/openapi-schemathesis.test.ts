import request from 'supertest';
import type { ConventionsOptions } from '../src/index.js';
import { basic, tokenApp } from './support/oauth2.js';

/**
 * What Schemathesis, driven by docs/openapi.yaml, found on the token
 * service: the revocation and introspection documents say
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

  /** Every parameter of every operation, references followed. */
  const parameters = (document: typeof doc) =>
    Object.entries(document.paths).flatMap(([path, item]: [string, typeof doc]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'head', 'post', 'put', 'patch', 'delete'].includes(method))
        .flatMap(([method, operation]: [string, typeof doc]) =>
          (operation.parameters ?? []).map((parameter: typeof doc) => ({
            at: `${method.toUpperCase()} ${path}`,
            operation,
            parameter: parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()] : parameter,
          })),
        ),
    );

  it('DPoP and CSRF-Token say when they apply, with a pattern only where the header is always checked', () => {
    const found = parameters(doc).filter(({ parameter }) => ['DPoP', 'CSRF-Token'].includes(parameter.name));
    expect(found.map(({ at }) => at)).toEqual(
      expect.arrayContaining(['GET /v1/me', 'POST /v1/oauth2/token', 'DELETE /v1/users/{id}']),
    );
    for (const { at, operation, parameter } of found) {
      // A Bearer request ignores both headers: where a bearer token may authenticate, no pattern is promised.
      const bearer = (operation.security ?? []).some((requirement: object) => 'bearer' in requirement);
      expect([at, parameter.schema.pattern === undefined || !bearer]).toEqual([at, true]);
      expect(parameter.description).toMatch(
        parameter.name === 'DPoP' ? /bearer token ignores it|token endpoint/ : /bearer .* ignores it/,
      );
      expect(parameter.schema.maxLength).toBeGreaterThan(0);
    }
    // The token endpoint checks every proof it gets: there the pattern is enforced, and kept.
    const token = found.find(({ at }) => at === 'POST /v1/oauth2/token');
    expect(token?.parameter.schema.pattern).toBeDefined();
  });

  it('token_type_hint has no enum (RFC 7009 §2.1, RFC 7662 §2.1) and names the known values', async () => {
    const { withConventions } = await import('../src/openapi/index.js');
    // The token service's options written as data, as scripts/openapi-build.mjs gives them.
    const options = { tokenRouter: { issuer: 'https://id.example' } } as unknown as ConventionsOptions;
    const generated: typeof doc = withConventions({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} }, options);
    const hints = [
      doc.components.schemas.TokenRequest.properties.token_type_hint,
      generated.components.schemas.TokenParameter.properties.token_type_hint,
    ];
    for (const hint of hints) {
      expect(hint.enum).toBeUndefined();
      expect(hint.pattern).toBeUndefined();
      expect(hint.description).toMatch(/`access_token` or `refresh_token`.*tolerated/s);
    }
  });

  it.each(['/v1/oauth2/revocations', '/v1/oauth2/introspections'])(
    '%s tolerates a token_type_hint outside the known ones',
    async (path) => {
      const res = await request(await app())
        .post(path)
        .type('form')
        .set('Authorization', DEMO)
        .send('token=unknown-token&token_type_hint=device_code');
      expect(res.status).toBe(200);
    },
  );

  it('POST /v1/exports lists 429 (the per-caller export cap) and 503 (the service’s)', () => {
    expect(Object.keys(doc.paths['/v1/exports'].post.responses)).toEqual(expect.arrayContaining(['429', '503']));
  });
});
