import request from 'supertest';

/** The demo credentials of the contract's defaults. */
export const DEMO = {
  username: 'alice',
  password: 'wonderland-rabbit-hole',
  clientId: 'demo-client',
  clientSecret: 'demo-secret',
} as const;

/** An access token of the demo user, from the password grant with the demo application's credentials. */
export async function demoAccessToken(url: string): Promise<string> {
  const res = await request(url).post('/v1/oauth2/token').type('form').send({
    grant_type: 'password',
    username: DEMO.username,
    password: DEMO.password,
    client_id: DEMO.clientId,
    client_secret: DEMO.clientSecret,
  });
  if (res.status !== 200) throw new Error(`no token: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}

/** A signed-in browser: its session cookie and the session's CSRF token. */
export interface BrowserSession {
  readonly cookie: string;
  readonly csrfToken: string;
}

/** Signs in through `POST /v1/sessions` (a form, as a browser sends it). */
export async function signIn(
  url: string,
  username: string = DEMO.username,
  password: string = DEMO.password,
): Promise<BrowserSession> {
  const res = await request(url).post('/v1/sessions').type('form').send({ username, password });
  if (res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  const setCookie = res.headers['set-cookie'] as unknown as string[];
  const cookie = (setCookie[0] ?? '').split(';')[0] ?? '';
  return { cookie, csrfToken: (res.body as { csrfToken: string }).csrfToken };
}

/** The 64-bit id of a JSON body, exactly, from its raw text (JSON.parse would round it). */
export const exactId = (text: string): string => /"id":(\d+)/.exec(text)?.[1] ?? '';

/** A fresh, unique email for a created user. */
let made = 0;
export const freshEmail = (): string => `new.person.${process.pid}.${Date.now()}.${++made}@example.com`;

/** The demo machine client's credentials (client credentials only, scope `exports`). */
export const DEMO_SERVICE = { clientId: 'demo-service', clientSecret: 'service-secret' } as const;

/** An access token of the demo machine client for itself (RFC 6749 §4.4), with HTTP Basic. */
export async function serviceAccessToken(url: string): Promise<string> {
  const res = await request(url)
    .post('/v1/oauth2/token')
    .type('form')
    .auth(DEMO_SERVICE.clientId, DEMO_SERVICE.clientSecret)
    .send({ grant_type: 'client_credentials', scope: 'exports' });
  if (res.status !== 200) throw new Error(`no token: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}
