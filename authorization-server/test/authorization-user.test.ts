import { channel } from 'node:diagnostics_channel';
import { MemoryConsentStore } from 'express-api-conventions-authorization-server';
import request from 'supertest';
import type { SecurityEvent } from '../../src/events/index.js';
import { authorize, authorizeQuery, codeServer, decide, PARTNER, pkce, promptFor, SPA } from './support/code-flow.js';

/**
 * The user's part of the authorization code flow: the application's sign-in
 * page (a single `returnTo`, never an open redirect), its consent page
 * (client name and scopes, approve and deny, CSRF-protected), consents
 * remembered per user, client and scopes, listed and withdrawn, and the
 * security events of each decision.
 */

const events: SecurityEvent[] = [];
const record = (message: unknown) => events.push(message as SecurityEvent);
beforeAll(() => channel('express-api-conventions:security').subscribe(record));
afterAll(() => channel('express-api-conventions:security').unsubscribe(record));
beforeEach(() => {
  events.length = 0;
});
const named = (name: string) => events.filter((event) => event.event === name);

describe('the sign-in page', () => {
  it('gets a user with no session, with returnTo naming the authorization request', async () => {
    const server = await codeServer();
    const query = authorizeQuery(SPA.id, SPA.redirect, pkce().challenge);
    const { res, location } = await authorize(server, query);
    expect(res.status).toBe(302);
    expect(location?.pathname).toBe('/sign-in');
    expect([...(location?.searchParams.keys() ?? [])]).toEqual(['returnTo']);
    const returnTo = location?.searchParams.get('returnTo');
    expect(returnTo).toBe(`/v1/oauth2/authorize?${query}`);
    expect(server.router.authorization?.returnTo(returnTo)).toBe(returnTo);
  });

  it('never a redirect for a request that fails before the session is asked', async () => {
    const server = await codeServer();
    const { res } = await authorize(server, authorizeQuery(SPA.id, 'https://evil.example/cb', pkce().challenge));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });

  it.each([
    ['another origin', 'https://evil.example/v1/oauth2/authorize?client_id=spa'],
    ['a scheme-relative URL', '//evil.example/v1/oauth2/authorize?client_id=spa'],
    ['a backslash', '/v1/oauth2/authorize?x=\\\\evil.example'],
    ['another path', '/v1/users?client_id=spa'],
    ['a path that walks out', '/v1/oauth2/authorize/../../users?x=1'],
    ['the path without a query', '/v1/oauth2/authorize'],
    ['a javascript: URL', 'javascript:alert(1)//v1/oauth2/authorize?'],
    ['a fragment', '/v1/oauth2/authorize?client_id=spa#x'],
    ['a non-string', ['/v1/oauth2/authorize?client_id=spa']],
  ])('refuses a returnTo of %s', async (_case, value) => {
    const server = await codeServer();
    expect(server.router.authorization?.returnTo(value)).toBeUndefined();
  });
});

describe('the consent page of a third-party client', () => {
  const partnerQuery = () => authorizeQuery(PARTNER.id, PARTNER.redirect, pkce().challenge, { scope: 'users:read' });

  it('is where a signed-in user goes first, and its prompt names the client and the scopes', async () => {
    const server = await codeServer();
    const cookie = await server.signIn();
    const query = partnerQuery();
    const { res, location } = await authorize(server, query, cookie);
    expect(res.status).toBe(302);
    expect(location?.pathname).toBe('/consent');
    expect(location?.searchParams.get('request')).toBe(query);
    const prompt = await promptFor(server, location as URL, cookie);
    expect(prompt).toEqual({
      kind: 'ask',
      client: { id: PARTNER.id, name: 'Partner App' },
      scopes: ['users:read'],
      action: '/v1/oauth2/decisions',
      fields: { request: query, csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
    });
  });

  it('sends a code after approval (303), remembers it, and skips the page the next time', async () => {
    const server = await codeServer();
    const cookie = await server.signIn();
    const res = await decide(server, partnerQuery(), cookie, 'approve');
    expect(res.status).toBe(303);
    const back = new URL(res.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(PARTNER.redirect);
    expect(back.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(back.searchParams.get('iss')).toBe(server.issuer);
    expect(named('authz_consent_given')).toEqual([
      expect.objectContaining({ level: 'INFO', subject: 'u-1', clientId: PARTNER.id, scope: 'users:read' }),
    ]);
    expect(named('authz_code_issued')).toEqual([
      expect.objectContaining({ subject: 'u-1', clientId: PARTNER.id, scope: 'users:read', sessionId: expect.any(String) }),
    ]);
    const again = await authorize(server, partnerQuery(), cookie);
    expect(again.location?.searchParams.has('code')).toBe(true);
    // Another user has not consented.
    const other = await authorize(server, partnerQuery(), await server.signIn('u-2'));
    expect(other.location?.pathname).toBe('/consent');
  });

  it('sends access_denied back to the client after a denial, with the state and iss', async () => {
    const server = await codeServer();
    const res = await decide(server, partnerQuery(), await server.signIn(), 'deny');
    expect(res.status).toBe(303);
    const back = new URL(res.headers.location as string);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('xyz-state');
    expect(back.searchParams.get('iss')).toBe(server.issuer);
    expect(back.searchParams.has('code')).toBe(false);
    expect(named('authz_consent_denied')).toEqual([
      expect.objectContaining({ outcome: 'failure', subject: 'u-1', clientId: PARTNER.id, scope: 'users:read' }),
    ]);
  });

  it.each([
    ['no CSRF token', (fields: Record<string, string>) => ({ request: fields.request as string })],
    ['a wrong token', (fields: Record<string, string>) => ({ ...fields, csrf_token: 'x'.repeat(43) })],
    ['the token of another request', (fields: Record<string, string>) => ({ ...fields, request: `${fields.request}&x=1` })],
  ])('refuses a decision with %s: 403, no redirect, no consent', async (_case, change) => {
    const server = await codeServer();
    const cookie = await server.signIn();
    const { location } = await authorize(server, partnerQuery(), cookie);
    const prompt = await promptFor(server, location as URL, cookie);
    if (prompt?.kind !== 'ask') throw new Error('no prompt');
    const res = await request(server.app)
      .post(prompt.action)
      .type('form')
      .set('Cookie', cookie)
      .send({ ...change(prompt.fields), decision: 'approve' });
    expect(res.status).toBe(403);
    expect(res.headers.location).toBeUndefined();
    expect(res.body.error).toBe('access_denied');
    expect(named('authz_consent_given')).toEqual([]);
  });

  it("refuses another session's token (the form was made for another user)", async () => {
    const server = await codeServer();
    const alice = await server.signIn();
    const { location } = await authorize(server, partnerQuery(), alice);
    const prompt = await promptFor(server, location as URL, alice);
    if (prompt?.kind !== 'ask') throw new Error('no prompt');
    const res = await request(server.app)
      .post(prompt.action)
      .type('form')
      .set('Cookie', await server.signIn('u-2'))
      .send({ ...prompt.fields, decision: 'approve' });
    expect(res.status).toBe(403);
  });

  it('asks the first-party client nothing', async () => {
    const server = await codeServer();
    const { location } = await authorize(server, authorizeQuery(SPA.id, SPA.redirect, pkce().challenge), await server.signIn());
    expect(location?.searchParams.has('code')).toBe(true);
  });

  it('asks again when the client asks for a scope the user has not granted it', async () => {
    const consents = new MemoryConsentStore();
    const server = await codeServer({ consents });
    await consents.grant('u-1', PARTNER.id, []);
    const { location } = await authorize(server, partnerQuery(), await server.signIn());
    expect(location?.pathname).toBe('/consent');
  });
});

describe('consents a user lists and withdraws', () => {
  it('lists the consent given and withdraws it, publishing authz_consent_withdrawn; the page comes back', async () => {
    const consents = new MemoryConsentStore();
    const server = await codeServer({ consents });
    const cookie = await server.signIn();
    const query = authorizeQuery(PARTNER.id, PARTNER.redirect, pkce().challenge, { scope: 'users:read' });
    await decide(server, query, cookie, 'approve');
    expect(await consents.list('u-1')).toEqual([{ clientId: PARTNER.id, scopes: ['users:read'], grantedAt: expect.any(String) }]);
    expect(await consents.withdraw('u-1', PARTNER.id)).toBe(true);
    expect(await consents.withdraw('u-1', PARTNER.id)).toBe(false);
    expect(await consents.list('u-1')).toEqual([]);
    expect(named('authz_consent_withdrawn')).toEqual([
      expect.objectContaining({ subject: 'u-1', clientId: PARTNER.id, scope: 'users:read' }),
    ]);
    const { location } = await authorize(server, query, cookie);
    expect(location?.pathname).toBe('/consent');
  });
});
