import request from 'supertest';
import { passwordPair } from '../support/passwords.js';
import { DEMO } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * No password truncation, black box: the demo user's password is set to 72,
 * 73 and 1,024 UTF-8 bytes of multi-byte characters, and a "twin" that
 * bcrypt alone would take for it (the same first 72 bytes, another end) gets
 * neither a token nor a session.
 */

const LENGTHS = [72, 73, 1024] as const;
const servers = new Map<number, RunningProcess>();

beforeAll(async () => {
  const started = await Promise.all(
    LENGTHS.map((bytes) => startServer({ DEMO_PASSWORD: passwordPair(bytes).password, RATE_LIMIT: '100000' })),
  );
  for (const [index, bytes] of LENGTHS.entries()) servers.set(bytes, started[index] as RunningProcess);
});

afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.stop()));
});

const api = (bytes: number) => request((servers.get(bytes) as RunningProcess).url);

const grant = (bytes: number, password: string) =>
  api(bytes).post('/v1/oauth2/token').type('form').send({
    grant_type: 'password',
    username: DEMO.username,
    password,
    client_id: DEMO.clientId,
    client_secret: DEMO.clientSecret,
  });

describe.each(LENGTHS)('a demo password of %i UTF-8 bytes', (bytes) => {
  const { password, twin } = passwordPair(bytes);

  it('POST /v1/oauth2/token: 200 with the password, 400 invalid_grant with its twin', async () => {
    const right = await grant(bytes, password);
    expect(right.status).toBe(200);
    expect(right.body.token_type).toBe('bearer');
    const wrong = await grant(bytes, twin);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: 'The username or password is not correct.' });
  });

  it('POST /v1/sessions: 201 and a cookie with the password, 401 and no cookie with its twin', async () => {
    const right = await api(bytes).post('/v1/sessions').send({ username: DEMO.username, password });
    expect(right.status).toBe(201);
    // The session cookie, then the device cookie.
    expect(right.headers['set-cookie']).toHaveLength(2);
    const wrong = await api(bytes).post('/v1/sessions').type('form').send({ username: DEMO.username, password: twin });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ errors: [{ message: 'The username or password is not right.', code: 40100 }] });
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });
});
