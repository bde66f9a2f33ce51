import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import express, { type Express } from 'express';
import {
  type AuthorizationCodeStore,
  type ConsentStore,
  type MemoryClientStore,
  MemoryRefreshTokenStore,
  MemorySessionStore,
  type RefreshTokenStore,
  sessionFromCookie,
  type TokenRouter,
  type TokenRouterOptions,
  tokenRouter,
} from 'express-api-conventions-authorization-server';
import request from 'supertest';
import { errorHandler, notFound } from '../../../src/errors/index.js';
import { MemoryRevokedFamilies } from '../../../src/oauth2/index.js';
import { seedStores, TOKEN_OPTIONS } from '../../../test/support/oauth2.js';
import { freePort } from '../../../test/support/services.js';

/** The clients of the code flow's scenarios. */
export const SPA = { id: 'spa', redirect: 'http://127.0.0.1/callback' } as const;
export const PARTNER = { id: 'partner', secret: 'partner-secret', redirect: 'https://partner.example/cb' } as const;
export const SCOPES = ['users:read', 'users:write'];
export const SESSION_COOKIE = 'sid';

const CODE_GRANTS = ['authorization_code', 'refresh_token'];

export async function codeClients(): Promise<MemoryClientStore> {
  const { clients } = await seedStores();
  const add = (client: Parameters<MemoryClientStore['add']>[0]) => clients.add({ grants: CODE_GRANTS, ...client });
  await add({ id: SPA.id, name: 'Demo SPA', firstParty: true, redirectUris: [SPA.redirect, 'http://localhost:5173/callback'] });
  await add({ id: 'other-spa', firstParty: true, redirectUris: ['http://127.0.0.1/other'] });
  await add({ id: 'two-uris', firstParty: true, redirectUris: ['https://a.example/cb', 'https://b.example/cb'] });
  await add({
    id: PARTNER.id,
    secret: PARTNER.secret,
    name: 'Partner App',
    redirectUris: [PARTNER.redirect],
    scopes: ['users:read'],
  });
  return clients;
}

/** A code-flow server: the token router with the authorization endpoint, signed-in users by session cookie. */
export interface CodeServer {
  readonly app: Express;
  readonly router: TokenRouter;
  readonly issuer: string;
  readonly sessions: MemorySessionStore;
  readonly refreshTokens: RefreshTokenStore;
  readonly revokedFamilies: MemoryRevokedFamilies;
  /** A signed-in user's Cookie header. */
  signIn(subject?: string): Promise<string>;
  /** Serves the app on its issuer's port. */
  listen(): Promise<Server>;
}

export interface CodeServerOptions {
  codes?: AuthorizationCodeStore;
  consents?: ConsentStore;
  refreshTokens?: RefreshTokenStore;
  router?: Partial<TokenRouterOptions>;
}

export async function codeServer(options: CodeServerOptions = {}): Promise<CodeServer> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const sessions = new MemorySessionStore();
  const refreshTokens = options.refreshTokens ?? new MemoryRefreshTokenStore();
  const revokedFamilies = new MemoryRevokedFamilies();
  const { users } = await seedStores();
  const router = tokenRouter({
    ...TOKEN_OPTIONS,
    issuer,
    users,
    clients: await codeClients(),
    scopes: SCOPES,
    refreshTokens,
    revokedFamilies,
    authorization: {
      findSession: sessionFromCookie(sessions, SESSION_COOKIE),
      signInUrl: '/sign-in',
      consentUrl: '/consent',
      ...(options.codes === undefined ? {} : { codes: options.codes }),
      ...(options.consents === undefined ? {} : { consents: options.consents }),
    },
    ...options.router,
  });
  const app = express();
  app.use(router);
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return {
    app,
    router,
    issuer,
    sessions,
    refreshTokens,
    revokedFamilies,
    async signIn(subject = 'u-1') {
      const { cookie } = await sessions.create(subject);
      return `${SESSION_COOKIE}=${cookie}`;
    },
    async listen() {
      const server = createServer(app);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      return server;
    },
  };
}

/** A PKCE pair (RFC 7636 §4.1, §4.2). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An authorization request's query for `client`, PKCE S256 and a state; `extra` overrides (undefined drops). */
export function authorizeQuery(
  clientId: string,
  redirectUri: string,
  challenge: string,
  extra: Record<string, string | undefined> = {},
): string {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    state: 'xyz-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  return query.toString();
}

/** GETs the authorization endpoint as a browser (signed in with `cookie`); answers the Location parsed. */
export async function authorize(server: CodeServer, query: string, cookie?: string, accept = 'application/json') {
  const req = request(server.app).get(`/v1/oauth2/authorize?${query}`).set('Accept', accept);
  if (cookie !== undefined) req.set('Cookie', cookie);
  const res = await req;
  const location = res.headers.location === undefined ? undefined : new URL(res.headers.location, server.issuer);
  return { res, location };
}

/** What consentPrompt() answers for the consent page the endpoint sent the user to. */
export async function promptFor(server: CodeServer, location: URL, cookie: string) {
  const helpers = server.router.authorization;
  if (helpers === undefined) throw new Error('no authorization helpers');
  const req = { query: Object.fromEntries(location.searchParams), headers: { cookie }, originalUrl: location.pathname };
  return helpers.consentPrompt(req as never);
}

/** Posts the consent page's form with `decision`; answers the response. */
export async function decide(server: CodeServer, query: string, cookie: string, decision: 'approve' | 'deny') {
  const { location } = await authorize(server, query, cookie);
  const prompt = await promptFor(server, location as URL, cookie);
  if (prompt?.kind !== 'ask') throw new Error('no consent prompt');
  return request(server.app)
    .post(prompt.action)
    .type('form')
    .set('Cookie', cookie)
    .send({ ...prompt.fields, decision });
}

/** Follows a third-party request through the consent page and approves; answers the client's redirect. */
export async function approveConsent(server: CodeServer, query: string, cookie: string): Promise<URL> {
  const res = await decide(server, query, cookie, 'approve');
  return new URL(res.headers.location as string);
}
