import type { Express } from 'express';
import createError from 'http-errors';
import multer from 'multer';
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import { freshStack, layoutApp, serve, VERSIONS } from '../support/neighbours.js';
import { expectSpecHeaders } from '../support/spec-headers.js';

// The errors of the common middlewares keep their meaning in the one error
// shape (docs/conventions.md section 14: the fitting status, `{ "errors": [{ message, code }] }`).

const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 1024, files: 1 } });

passport.use(
  new LocalStrategy((username, password, done) => {
    done(null, username === 'ada' && password === 'right' ? { name: 'ada' } : false);
  }),
);

const routes = (app: Express) => {
  app.post('/v1/avatars', upload.single('avatar'), (req, res) => {
    res.status(201).json({ size: req.file?.size ?? 0 });
  });
  app.post(
    '/v1/sign-ins',
    passport.initialize(),
    passport.authenticate('local', { session: false, failWithError: true }),
    (req, res) => {
      res.status(201).json({ user: (req.user as { name: string }).name });
    },
  );
  app.get('/v1/legacy/:status', (req) => {
    throw createError(Number(req.params.status), 'Told by the route.');
  });
};

/** A multipart body with one file field (and `extra` more). */
function multipart(field: string, bytes: number, extra = 0): { body: Buffer; type: string } {
  const boundary = 'neighbours-suite-boundary';
  const part = (name: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${'x'.repeat(bytes)}\r\n`;
  let text = part(field);
  for (let i = 0; i < extra; i++) text += part(field);
  return { body: Buffer.from(`${text}--${boundary}--\r\n`), type: `multipart/form-data; boundary=${boundary}` };
}

const shape = (text: string) => {
  const body = JSON.parse(text) as { errors: { message: unknown; code: unknown }[] };
  return body.errors.map((e) => ({ message: typeof e.message, code: Number.isInteger(e.code) }));
};

describe.each(VERSIONS)('on %s', (version) => {
  let served: Awaited<ReturnType<typeof serve>>;
  beforeEach(async () => {
    served = await serve(layoutApp(freshStack(version), 'neighbour before the preset', [], routes).app);
  });
  afterEach(() => served.close());

  describe('multer', () => {
    it('takes a file within its limits', async () => {
      const { body, type } = multipart('avatar', 100);
      const res = await served.fetch('/v1/avatars', { method: 'POST', body, headers: { 'content-type': type } });
      expect(res.status).toBe(201);
      expect(JSON.parse(res.text)).toEqual({ size: 100 });
      expectSpecHeaders(res.headers);
    });

    it('answers a file over its size limit with 413 in the error shape', async () => {
      const { body, type } = multipart('avatar', 4096);
      const res = await served.fetch('/v1/avatars', { method: 'POST', body, headers: { 'content-type': type } });
      expect(res.status).toBe(413);
      expect(shape(res.text)).toEqual([{ message: 'string', code: true }]);
      expectSpecHeaders(res.headers);
    });

    it('answers its other errors (an unexpected field) with 400 in the error shape', async () => {
      const { body, type } = multipart('photo', 10);
      const res = await served.fetch('/v1/avatars', { method: 'POST', body, headers: { 'content-type': type } });
      expect(res.status).toBe(400);
      expect(shape(res.text)).toEqual([{ message: 'string', code: true }]);
      expectSpecHeaders(res.headers);
    });
  });

  describe('passport (passport-local, failWithError: true)', () => {
    it('signs in with the right password', async () => {
      const res = await served.fetch('/v1/sign-ins', {
        method: 'POST',
        body: JSON.stringify({ username: 'ada', password: 'right' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(201);
      expect(JSON.parse(res.text)).toEqual({ user: 'ada' });
      expectSpecHeaders(res.headers);
    });

    it('answers a refusal with a JSON 401 that carries a WWW-Authenticate challenge', async () => {
      const res = await served.fetch('/v1/sign-ins', {
        method: 'POST',
        body: JSON.stringify({ username: 'ada', password: 'wrong' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(401);
      expect(shape(res.text)).toEqual([{ message: 'string', code: true }]);
      // RFC 9110 §11.6.1: a challenge starts with an auth-scheme token.
      expect(res.headers['www-authenticate']).toMatch(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+/);
      expectSpecHeaders(res.headers);
    });
  });

  describe('http-errors', () => {
    it.each([
      [404, 'Told by the route.'],
      [409, 'Told by the route.'],
      [422, 'Told by the route.'],
    ])('keeps the status %i and the exposed message of a client error', async (status, message) => {
      const res = await served.fetch(`/v1/legacy/${status}`);
      expect(res.status).toBe(status);
      const body = JSON.parse(res.text) as { errors: { message: string; code: number }[] };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]?.message).toBe(message);
      expect(Number.isInteger(body.errors[0]?.code)).toBe(true);
      expectSpecHeaders(res.headers);
    });

    it('keeps a 503 and does not make its unexposed message the error message', async () => {
      const res = await served.fetch('/v1/legacy/503');
      expect(res.status).toBe(503);
      // expose: false (http-errors on 5xx): the message is the catalogue's; development mode may add detail.
      expect((JSON.parse(res.text) as { errors: { message: string }[] }).errors[0]?.message).not.toBe('Told by the route.');
      expect(shape(res.text)).toEqual([{ message: 'string', code: true }]);
      expectSpecHeaders(res.headers, { date: false });
    });
  });
});
