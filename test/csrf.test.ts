import express from 'express';
import request from 'supertest';
import { errorHandler } from '../src/errors/index.js';
import { conventions } from '../src/index.js';
import { type CsrfTokens, cookieValue, csrfProtection, csrfTokens } from '../src/security/index.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const REFUSED = { errors: [{ message: 'The CSRF token is missing or not valid.', code: 40302 }] };

/**
 * An app shaped like the reference server: sessions live behind the `sid`
 * cookie; a bearer token authenticates without one.
 */
function sessionApp(tokens: CsrfTokens, sessionOf?: (req: express.Request) => string | undefined | Promise<string | undefined>) {
  const sessions = new Set(['s1', 's2']);
  const app = express();
  app.use(
    conventions({
      csrfProtection: { tokens, sessionOf: sessionOf ?? ((req) => cookieValue(req, 'sid') ?? undefined) },
    }),
  );
  app.get('/v1/users', (_req, res) => res.json({ users: [] }));
  app.post('/v1/users', (req, res) => res.status(201).json({ body: req.body }));
  app.delete('/v1/users/1', (_req, res) => res.status(204).end());
  app.post('/v1/sessions/:id/token', (req, res) => {
    const id = req.params.id as string;
    res.json({ csrfToken: sessions.has(id) ? tokens.issue(id) : null });
  });
  app.use(errorHandler({ production: true, log: false }));
  return app;
}

describe('csrfProtection() (rule 10.1)', () => {
  const tokens = csrfTokens({ secret: SECRET });
  const app = sessionApp(tokens);
  const token = tokens.issue('s1');

  describe('a state-changing request authenticated by the session cookie', () => {
    it('is refused with 403 JSON without a token', async () => {
      const res = await request(app).post('/v1/users').set('Cookie', 'sid=s1').send({ name: 'Ada' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(REFUSED);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it('passes with the session’s token in the CSRF-Token header', async () => {
      const res = await request(app).post('/v1/users').set('Cookie', 'sid=s1').set('CSRF-Token', token).send({ name: 'Ada' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ body: { name: 'Ada' } });
    });

    it('passes with the token in the _csrf form field, which the route never sees', async () => {
      const res = await request(app)
        .post('/v1/users')
        .set('Cookie', 'sid=s1')
        .type('form')
        .send(`name=Ada&_csrf=${encodeURIComponent(token)}`);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ body: { name: 'Ada' } });
    });

    it('is refused with another session’s token, a changed token, or an empty one', async () => {
      for (const wrong of [tokens.issue('s2'), `${token.slice(0, -1)}A`, `${token}x`, 'x']) {
        const res = await request(app).post('/v1/users').set('Cookie', 'sid=s1').set('CSRF-Token', wrong);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(REFUSED);
      }
      const empty = await request(app).post('/v1/users').set('Cookie', 'sid=s1').type('form').send('_csrf=');
      expect(empty.status).toBe(403);
    });

    it('ignores _csrf in a JSON body: only the form field and the header count', async () => {
      const res = await request(app).post('/v1/users').set('Cookie', 'sid=s1').send({ _csrf: token });
      expect(res.status).toBe(403);
    });

    it('is checked through method override too (a form POST with _method=DELETE)', async () => {
      const without = await request(app).post('/v1/users/1').set('Cookie', 'sid=s1').type('form').send('_method=DELETE');
      expect(without.status).toBe(403);
      const withToken = await request(app)
        .post('/v1/users/1')
        .set('Cookie', 'sid=s1')
        .type('form')
        .send(`_method=DELETE&_csrf=${encodeURIComponent(token)}`);
      expect(withToken.status).toBe(204);
    });

    it.each(['PUT', 'PATCH', 'DELETE'])('checks %s', async (method) => {
      const res = await request(app)[method.toLowerCase() as 'put'](`/v1/users/1`).set('Cookie', 'sid=s1');
      expect(res.status).toBe(403);
    });
  });

  describe('requests that are not checked', () => {
    it('a safe method with the cookie', async () => {
      const res = await request(app).get('/v1/users').set('Cookie', 'sid=s1');
      expect(res.status).toBe(200);
    });

    it('a request with a bearer token and no cookie', async () => {
      const res = await request(app).post('/v1/users').set('Authorization', 'Bearer abc').send({ name: 'Ada' });
      expect(res.status).toBe(201);
    });

    it('but a bearer token beside the session cookie does not exempt the request', async () => {
      const res = await request(app).post('/v1/users').set('Authorization', 'Bearer abc').set('Cookie', 'sid=s1');
      expect(res.status).toBe(403);
    });
  });

  it('finds the session asynchronously, and passes a failing lookup to the error handler', async () => {
    const asyncApp = sessionApp(tokens, async (req) => cookieValue(req, 'sid'));
    expect((await request(asyncApp).post('/v1/users').set('Cookie', 'sid=s1')).status).toBe(403);
    expect((await request(asyncApp).post('/v1/users').set('Cookie', 'sid=s1').set('CSRF-Token', token)).status).toBe(201);
    const failing = sessionApp(tokens, () => {
      throw new Error('session store down');
    });
    expect((await request(failing).post('/v1/users').set('Cookie', 'sid=s1')).status).toBe(500);
  });

  it('a token made with another secret is refused', async () => {
    const other = csrfTokens({ secret: `${SECRET}-other` });
    const res = await request(app).post('/v1/users').set('Cookie', 'sid=s1').set('CSRF-Token', other.issue('s1'));
    expect(res.status).toBe(403);
  });
});

describe('one-time tokens (csrfTokens({ oneTime: true }))', () => {
  const tokens = csrfTokens({ secret: SECRET, oneTime: true, maxOutstanding: 2 });
  const app = sessionApp(tokens);
  const post = (csrf: string) => request(app).post('/v1/users').set('Cookie', 'sid=s1').set('CSRF-Token', csrf);

  it('accepts each token once', async () => {
    const token = tokens.issue('s1');
    expect((await post(token)).status).toBe(201);
    const again = await post(token);
    expect(again.status).toBe(403);
    expect(again.body).toEqual(REFUSED);
  });

  it('differs on every issue, and keeps only the newest maxOutstanding', async () => {
    const first = tokens.issue('s1');
    const second = tokens.issue('s1');
    const third = tokens.issue('s1');
    expect(new Set([first, second, third]).size).toBe(3);
    expect((await post(first)).status).toBe(403);
    expect((await post(third)).status).toBe(201);
    expect((await post(second)).status).toBe(201);
  });

  it('refuses a token of another session, and a forged nonce', async () => {
    expect((await post(tokens.issue('s2'))).status).toBe(403);
    const [, mac] = tokens.issue('s1').split('.');
    expect((await post(`forged.${mac}`)).status).toBe(403);
    expect((await post('no-dot')).status).toBe(403);
  });
});

describe('configuration', () => {
  it('refuses a short secret, and wrong options', () => {
    expect(() => csrfTokens({ secret: 'short' })).toThrow(
      'csrfTokens(options): `secret` must be a string or Buffer of at least 32 bytes',
    );
    expect(() => csrfTokens({ secret: SECRET, oneTime: 'yes' as never })).toThrow('`oneTime` must be true or false');
    expect(() => csrfProtection({ tokens: {} as never, sessionOf: () => undefined })).toThrow(
      'csrfProtection(options): `tokens` must be the object returned by csrfTokens()',
    );
    expect(() => csrfProtection({ tokens: csrfTokens({ randomSecret: true }) } as never)).toThrow(
      '`sessionOf` must be a function',
    );
    expect(() => csrfProtection({ tokens: csrfTokens({ randomSecret: true }), sessionOf: () => undefined, header: '' })).toThrow(
      '`header` must be a non-empty string',
    );
  });

  it('refuses a missing secret at start-up, as missing token keys are refused', () => {
    for (const options of [undefined, {}, { secret: undefined }, { secret: process.env.EAC_UNSET_CSRF_SECRET }]) {
      expect(() => csrfTokens(options)).toThrow(
        'csrfTokens(options): `secret` must be a string or Buffer of at least 32 bytes, the same on every instance (or `randomSecret: true` for a secret of this process alone); received undefined. [EAC_OPTION_INVALID',
      );
    }
    expect(() => csrfTokens({ secret: SECRET, randomSecret: true })).toThrow(
      'csrfTokens(options): `secret` and `randomSecret: true` exclude each other; give one. [EAC_OPTIONS_CONFLICT',
    );
  });

  it('a random secret of the process only when asked by name: tokens from one issuer fail at another', () => {
    const a = csrfTokens({ randomSecret: true });
    const b = csrfTokens({ randomSecret: true });
    expect(a.verify('s1', a.issue('s1'))).toBe(true);
    expect(b.verify('s1', a.issue('s1'))).toBe(false);
  });
});

describe('cookieValue()', () => {
  const read = (header: string | undefined, name: string) =>
    cookieValue({ headers: header === undefined ? {} : { cookie: header } } as express.Request, name);

  it('reads one cookie among several, decoded', () => {
    expect(read('a=1; sid=s%201; b=2', 'sid')).toBe('s 1');
    expect(read('asid=x; sid="q"', 'sid')).toBe('q');
    expect(read('a=1', 'sid')).toBeUndefined();
    expect(read(undefined, 'sid')).toBeUndefined();
    expect(read('sid=%E0%A4%A', 'sid')).toBe('%E0%A4%A');
  });
});
