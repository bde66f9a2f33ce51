import { createHmac } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { arrayBufferToBase64, parseList } from 'structured-headers';
import request from 'supertest';
import type { AuthContext } from '../src/auth-context.js';
import { ApiError, apiError, errorHandler, notFound } from '../src/errors/index.js';
import { conventions } from '../src/index.js';
import { policyItem, policyItemPrefix, quotedName, stateItem } from '../src/rate-limit/headers.js';
import { identifyRequest, limiter, type RateLimitOptions, rateLimit, tooManyRequests } from '../src/rate-limit/index.js';
import { type CounterStore, MemoryCounterStore } from '../src/stores/index.js';
import { appWith, expectHeaders } from './helpers.js';

const SECRET = 'test-partition-secret';
/** The `pk` a partition must carry: HMAC-SHA-256 of the identity, 96 bits, base64 (computed here independently). */
const pk = (identity: string): string =>
  createHmac('sha256', SECRET).update(identity).digest().subarray(0, 12).toString('base64');

const TOO_MANY = { errors: [{ message: 'Too many requests; retry after the time in Retry-After.', code: 42900 }] };
const STORE_DOWN = { errors: [{ message: 'A shared state store is unreachable.', code: 50302 }] };

/** Acts as bearerAuth() would: fills req.auth from test headers. */
const fakeAuth: RequestHandler = (req, _res, next) => {
  const subject = req.get('test-user');
  if (subject !== undefined) {
    const clientId = req.get('test-client');
    req.auth = { subject, scopes: [], ...(clientId === undefined ? {} : { clientId }) } satisfies AuthContext;
  }
  next();
};

/** An app with a limiter, the routes of most tests, and the error model. */
function limitedApp(options: RateLimitOptions, before: RequestHandler[] = []): Express {
  return appWith([...before, rateLimit({ partitionSecret: SECRET, ...options })], (app) => {
    app.get('/v1/things', (_req, res) => {
      res.json({ things: [] });
    });
    app.post('/v1/things', (_req, res) => {
      res.status(201).json({ id: 1 });
    });
    app.get('/v1/broken', () => {
      throw new Error('boom');
    });
    app.use(notFound(), errorHandler({ production: true, log: false }));
  });
}

/** Parses a RateLimit or RateLimit-Policy header into plain objects (name, then parameters). */
function parsed(value: string | undefined): Record<string, unknown>[] {
  return parseList(value ?? '').map(([name, params]) => {
    const item: Record<string, unknown> = { name };
    for (const [key, param] of params as Map<string, unknown>) {
      item[key] = param instanceof ArrayBuffer || ArrayBuffer.isView(param) ? arrayBufferToBase64(param as ArrayBuffer) : param;
    }
    return item;
  });
}

const ADDRESS = 'address:127.0.0.1';
const byAddress = { address: () => '127.0.0.1' };

afterEach(() => {
  jest.restoreAllMocks();
});

describe('rateLimit()', () => {
  describe('the RateLimit-Policy and RateLimit headers (rules 12.2 and 12.3)', () => {
    it('writes one item per policy: quoted name, q, w and pk; r, t and pk', async () => {
      const app = limitedApp({ ...byAddress, user: { limit: 3 }, application: { limit: 5, windowSeconds: 30 } });
      const res = await request(app).get('/v1/things');
      expect(res.status).toBe(200);
      expectHeaders(res, {
        'RateLimit-Policy': `"user";q=3;w=60;pk=:${pk(ADDRESS)}:, "application";q=5;w=30;pk=:${pk(ADDRESS)}:`,
        RateLimit: `"user";r=2;t=60;pk=:${pk(ADDRESS)}:, "application";r=4;t=30;pk=:${pk(ADDRESS)}:`,
      });
      expect(parsed(res.headers['ratelimit-policy'])).toEqual([
        { name: 'user', q: 3, w: 60, pk: pk(ADDRESS) },
        { name: 'application', q: 5, w: 30, pk: pk(ADDRESS) },
      ]);
      expect(parsed(res.headers.ratelimit)).toEqual([
        { name: 'user', r: 2, t: 60, pk: pk(ADDRESS) },
        { name: 'application', r: 4, t: 30, pk: pk(ADDRESS) },
      ]);
    });

    it('never sends the superseded X-RateLimit-* headers (rule 3)', async () => {
      const res = await request(limitedApp(byAddress)).get('/v1/things');
      expectHeaders(res, {
        'X-RateLimit-Limit': null,
        'X-RateLimit-Remaining': null,
        'X-RateLimit-Reset': null,
        'RateLimit-Limit': null,
        'RateLimit-Remaining': null,
        'RateLimit-Reset': null,
      });
    });

    it.each([
      ['a 201', 'post', '/v1/things', 201],
      ['a 404 of the error model', 'get', '/v1/nothing', 404],
      ['a 500 of the error model', 'get', '/v1/broken', 500],
    ] as const)('is sent with %s, as with any status', async (_title, method, path, status) => {
      const app = limitedApp({ ...byAddress, application: false, limit: 10 });
      const res = await request(app)[method](path);
      expect(res.status).toBe(status);
      expectHeaders(res, {
        'RateLimit-Policy': `"user";q=10;w=60;pk=:${pk(ADDRESS)}:`,
        RateLimit: `"user";r=9;t=60;pk=:${pk(ADDRESS)}:`,
      });
    });

    it('counts down r and t as the window passes', async () => {
      let now = 1_800_000_000_000;
      jest.spyOn(Date, 'now').mockImplementation(() => now);
      const app = limitedApp({ ...byAddress, application: false, limit: 10 });
      await request(app).get('/v1/things');
      now += 25_300;
      const res = await request(app).get('/v1/things');
      expect(parsed(res.headers.ratelimit)).toEqual([{ name: 'user', r: 8, t: 35, pk: pk(ADDRESS) }]);
      now += 34_700;
      const next = await request(app).get('/v1/things');
      expect(parsed(next.headers.ratelimit)).toEqual([{ name: 'user', r: 9, t: 60, pk: pk(ADDRESS) }]);
    });
  });

  describe('over a limit', () => {
    it('answers 429 through the error model, Retry-After at the instant of that policy’s t (rule 2)', async () => {
      let now = 1_800_000_000_000;
      jest.spyOn(Date, 'now').mockImplementation(() => now);
      const app = limitedApp({ ...byAddress, user: { limit: 2 }, application: { limit: 100 } });
      await request(app).get('/v1/things');
      await request(app).get('/v1/things');
      now += 12_500;
      const res = await request(app).get('/v1/things');
      expect(res.status).toBe(429);
      expect(res.body).toEqual(TOO_MANY);
      expectHeaders(res, {
        'Retry-After': '48',
        'Content-Type': 'application/json; charset=utf-8',
        // The refused request spends nothing: the application policy shows the two that passed.
        RateLimit: `"user";r=0;t=48;pk=:${pk(ADDRESS)}:, "application";r=98;t=48;pk=:${pk(ADDRESS)}:`,
      });
    });

    it('names the latest reset when several policies are exceeded', async () => {
      let now = 1_800_000_000_000;
      jest.spyOn(Date, 'now').mockImplementation(() => now);
      const app = limitedApp({
        ...byAddress,
        user: { limit: 1, windowSeconds: 20 },
        application: { limit: 1, windowSeconds: 90 },
      });
      await request(app).get('/v1/things');
      now += 5_000;
      const res = await request(app).get('/v1/things');
      expect(res.status).toBe(429);
      expectHeaders(res, {
        'Retry-After': '85',
        RateLimit: `"user";r=0;t=15;pk=:${pk(ADDRESS)}:, "application";r=0;t=85;pk=:${pk(ADDRESS)}:`,
      });
    });

    it('does not run the route', async () => {
      const route = jest.fn((_req: express.Request, res: express.Response) => {
        res.json({});
      });
      const app = appWith(rateLimit({ limit: 1, application: false }), (a) => {
        a.get('/v1/things', route);
        a.use(errorHandler({ log: false }));
      });
      await request(app).get('/v1/things');
      expect((await request(app).get('/v1/things')).status).toBe(429);
      expect(route).toHaveBeenCalledTimes(1);
    });
  });

  describe('counting per user and per application (rule 12.6)', () => {
    const options = { ...byAddress, user: { limit: 2 }, application: { limit: 3 } };

    it('counts users apart and their shared application together', async () => {
      const app = limitedApp(options, [fakeAuth]);
      const alice = await request(app).get('/v1/things').set({ 'test-user': 'alice', 'test-client': 'mobile' });
      const bob = await request(app).get('/v1/things').set({ 'test-user': 'bob', 'test-client': 'mobile' });
      expectHeaders(alice, {
        'RateLimit-Policy': `"user";q=2;w=60;pk=:${pk('user:alice')}:, "application";q=3;w=60;pk=:${pk('application:mobile')}:`,
        RateLimit: `"user";r=1;t=60;pk=:${pk('user:alice')}:, "application";r=2;t=60;pk=:${pk('application:mobile')}:`,
      });
      expectHeaders(bob, {
        RateLimit: `"user";r=1;t=60;pk=:${pk('user:bob')}:, "application";r=1;t=60;pk=:${pk('application:mobile')}:`,
      });
      await request(app).get('/v1/things').set({ 'test-user': 'carol', 'test-client': 'mobile' });
      const refused = await request(app).get('/v1/things').set({ 'test-user': 'dave', 'test-client': 'mobile' });
      expect(refused.status).toBe(429);
      expect(parsed(refused.headers.ratelimit)).toEqual([
        // Refused by the application policy: the hit dave's user policy counted is given back.
        { name: 'user', r: 2, t: 60, pk: pk('user:dave') },
        { name: 'application', r: 0, t: 60, pk: pk('application:mobile') },
      ]);
      const other = await request(app).get('/v1/things').set({ 'test-user': 'dave', 'test-client': 'desktop' });
      expect(other.status).toBe(200);
    });

    it('gives back what a refused request counted: refusals spend no quota of any policy', async () => {
      const app = limitedApp({ ...byAddress, user: { limit: 1 }, application: { limit: 5 } }, [fakeAuth]);
      const as = (user: string) => request(app).get('/v1/things').set({ 'test-user': user, 'test-client': 'mobile' });
      expect((await as('ann')).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await as('ann')).status).toBe(429);
      // Only ann's first request and this one count against the application.
      const bob = await as('bob');
      expect(parsed(bob.headers.ratelimit)[1]).toEqual({ name: 'application', r: 3, t: 60, pk: pk('application:mobile') });
    });

    it('refuses a user over its limit whatever application it uses', async () => {
      const app = limitedApp(options, [fakeAuth]);
      await request(app).get('/v1/things').set({ 'test-user': 'alice', 'test-client': 'one' });
      await request(app).get('/v1/things').set({ 'test-user': 'alice', 'test-client': 'two' });
      const res = await request(app).get('/v1/things').set({ 'test-user': 'alice', 'test-client': 'three' });
      expect(res.status).toBe(429);
      expectHeaders(res, { 'Retry-After': '60' });
    });

    it('counts a forged Basic client id by the address, never against that application', async () => {
      // An unverified `Authorization: Basic demo-client:<wrong secret>` only claims the application.
      const app = limitedApp(options, [fakeAuth]);
      const forged = `Basic ${Buffer.from('demo-client:wrong-secret').toString('base64')}`;
      for (let i = 0; i < 3; i++) await request(app).get('/v1/things').set('Authorization', forged);
      const refused = await request(app).get('/v1/things').set('Authorization', forged);
      expect(refused.status).toBe(429);
      expectHeaders(refused, {
        'RateLimit-Policy': `"user";q=2;w=60;pk=:${pk(ADDRESS)}:, "application";q=3;w=60;pk=:${pk(ADDRESS)}:`,
      });
      // The real application's users are untouched by the forgeries.
      const real = await request(app).get('/v1/things').set({ 'test-user': 'alice', 'test-client': 'demo-client' });
      expect(real.status).toBe(200);
      expect(parsed(real.headers.ratelimit)[1]).toEqual({ name: 'application', r: 2, t: 60, pk: pk('application:demo-client') });
    });

    it('counts a client_id of a parsed form body by the address', async () => {
      const app = limitedApp(options, [express.urlencoded({ extended: false })]);
      const res = await request(app).post('/v1/things').type('form').send('client_id=demo-client&client_secret=x');
      expect(res.status).toBe(201);
      expect(parsed(res.headers.ratelimit)[1]).toEqual({ name: 'application', r: 2, t: 60, pk: pk(ADDRESS) });
    });

    it('takes the application from verified client credentials (req.verifiedClient)', async () => {
      const verified: RequestHandler = (req, _res, next) => {
        req.verifiedClient = { id: 'demo-client' };
        next();
      };
      const res = await request(limitedApp(options, [verified])).get('/v1/things');
      expectHeaders(res, {
        RateLimit: `"user";r=1;t=60;pk=:${pk(ADDRESS)}:, "application";r=2;t=60;pk=:${pk('application:demo-client')}:`,
      });
    });

    it('counts an anonymous request by its client address in both policies', async () => {
      const app = appWith(rateLimit({ partitionSecret: SECRET, user: { limit: 2 }, application: { limit: 3 } }), (a) =>
        a.get('/v1/things', (req, res) => res.json({ ip: req.ip })),
      );
      const res = await request(app).get('/v1/things');
      const address = `address:${ipKeyGenerator(res.body.ip)}`;
      expect(parsed(res.headers['ratelimit-policy'])).toEqual([
        { name: 'user', q: 2, w: 60, pk: pk(address) },
        { name: 'application', q: 3, w: 60, pk: pk(address) },
      ]);
    });

    it('lets the application supply its own identity', async () => {
      const identify = jest.fn(() => ({ user: 'from-session', application: 'from-api-key' }));
      const app = limitedApp({ ...options, identify });
      const res = await request(app).get('/v1/things');
      expect(identify).toHaveBeenCalledTimes(1);
      expect(parsed(res.headers.ratelimit)).toEqual([
        { name: 'user', r: 1, t: 60, pk: pk('user:from-session') },
        { name: 'application', r: 2, t: 60, pk: pk('application:from-api-key') },
      ]);
    });

    it('waits for an identify that returns a promise (a session lookup)', async () => {
      const identify = async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { user: 'from-session' };
      };
      const res = await request(limitedApp({ ...options, identify })).get('/v1/things');
      expect(res.status).toBe(200);
      expect(parsed(res.headers.ratelimit)[0]).toEqual({ name: 'user', r: 1, t: 60, pk: pk('user:from-session') });
    });

    it('hands a rejected identify to the error handler', async () => {
      const identify = () => Promise.reject(new Error('session store down'));
      const res = await request(limitedApp({ ...options, identify })).get('/v1/things');
      expect(res.status).toBe(500);
      expectHeaders(res, { RateLimit: null });
    });

    it('counts a synchronous identity at once, without waiting for a promise', () => {
      const store = new MemoryCounterStore();
      const increment = jest.spyOn(store, 'increment');
      const middleware = rateLimit({ store, identify: () => ({ user: 'ann', application: 'app' }) });
      const res = { headersSent: false, append: () => undefined } as unknown as express.Response;
      middleware({} as express.Request, res, () => undefined);
      // Called before the middleware returned: no promise between identify and the store.
      expect(increment).toHaveBeenCalledTimes(1);
      store.close();
    });

    it('counts in its own MemoryCounterStore without a promise: next() runs before the middleware returns', () => {
      const store = new MemoryCounterStore();
      const middleware = rateLimit({ store, partitionSecret: SECRET, identify: () => ({ user: 'ann', application: 'app' }) });
      const headers: Record<string, string> = {};
      const res = {
        headersSent: false,
        append: (name: string, value: string) => {
          headers[name] = value;
        },
      } as unknown as express.Response;
      const next = jest.fn();
      middleware({} as express.Request, res, next);
      expect(next).toHaveBeenCalledWith();
      expect(parsed(headers.RateLimit).map((item) => [item.name, item.r])).toEqual([
        ['user', 99],
        ['application', 99],
      ]);
      store.close();
    });

    it('counts anonymous requests by req.ip per request behind a trusted proxy, by the connection without one', () => {
      const remaining = (trustProxy: boolean, ips: string[]): unknown[] => {
        const middleware = rateLimit({ partitionSecret: SECRET, user: false });
        const socket = { remoteAddress: '10.0.0.1' };
        const app = { enabled: (setting: string) => setting === 'trust proxy' && trustProxy };
        return ips.map((ip) => {
          const headers: Record<string, string> = {};
          const res = { headersSent: false, append: (name: string, value: string) => (headers[name] = value) };
          middleware({ ip, socket, app } as unknown as express.Request, res as unknown as express.Response, () => undefined);
          return parsed(headers.RateLimit)[0]?.r;
        });
      };
      // Behind a trusted proxy each forwarded address is its own client.
      expect(remaining(true, ['203.0.113.1', '203.0.113.2'])).toEqual([99, 99]);
      // Without one, req.ip is the connection's address: one client.
      expect(remaining(false, ['10.0.0.1', '10.0.0.1'])).toEqual([99, 98]);
    });

    it('still asks a MemoryCounterStore subclass whose increment() is its own', async () => {
      const counted: string[] = [];
      class LoggingStore extends MemoryCounterStore {
        override increment(key: string, windowMs: number) {
          counted.push(key);
          return super.increment(key, windowMs);
        }
      }
      const store = new LoggingStore();
      const res = await request(limitedApp({ store })).get('/v1/things');
      expect(res.status).toBe(200);
      expect(counted).toHaveLength(2);
      store.close();
    });

    it('never shows the raw user, client id or address in pk', async () => {
      const app = limitedApp({}, [fakeAuth]);
      const res = await request(app).get('/v1/things').set({ 'test-user': 'alice', 'test-client': 'mobile' });
      const anonymous = await request(app).get('/v1/things');
      const all = `${res.headers.ratelimit} ${res.headers['ratelimit-policy']} ${anonymous.headers.ratelimit}`;
      for (const secret of ['alice', 'mobile', '127.0.0.1', 'YWxpY2U']) expect(all).not.toContain(secret);
    });
  });

  describe('several limiters on one route', () => {
    it('append their items to one list per header', async () => {
      const app = appWith(
        [
          rateLimit({ ...byAddress, partitionSecret: SECRET, limit: 100 }),
          rateLimit({ ...byAddress, partitionSecret: SECRET, user: { name: 'token-user', limit: 5 }, application: false }),
        ],
        (a) => a.get('/v1/things', (_req, res) => res.json({})),
      );
      const res = await request(app).get('/v1/things');
      expect(parsed(res.headers['ratelimit-policy']).map((item) => [item.name, item.q])).toEqual([
        ['user', 100],
        ['application', 100],
        ['token-user', 5],
      ]);
      expect(parsed(res.headers.ratelimit).map((item) => [item.name, item.r])).toEqual([
        ['user', 99],
        ['application', 99],
        ['token-user', 4],
      ]);
    });
  });

  describe('when the store fails', () => {
    const failing: CounterStore = {
      increment: () => Promise.reject(new Error('connection refused')),
      get: () => Promise.reject(new Error('connection refused')),
      decrement: () => Promise.reject(new Error('connection refused')),
      reset: () => Promise.reject(new Error('connection refused')),
    };

    it('fails closed by default: 503 stateStoreUnavailable, the policy still shown', async () => {
      const log = jest.fn();
      const res = await request(limitedApp({ ...byAddress, store: failing, log, application: false })).get('/v1/things');
      expect(res.status).toBe(503);
      expect(res.body).toEqual(STORE_DOWN);
      expectHeaders(res, { 'RateLimit-Policy': `"user";q=100;w=60;pk=:${pk(ADDRESS)}:`, RateLimit: null });
      expect(log).toHaveBeenCalledWith(new Error('connection refused'));
    });

    it('gives back the hits of the policies counted before the one that failed', async () => {
      const inner = new MemoryCounterStore();
      let down = true;
      const halfBroken: CounterStore = {
        increment: (key, windowMs) =>
          down && key.startsWith('application:') ? Promise.reject(new Error('timeout')) : inner.increment(key, windowMs),
        get: (key) => inner.get(key),
        decrement: (key) => inner.decrement(key),
        reset: (key) => inner.reset(key),
      };
      const app = limitedApp({ ...byAddress, store: halfBroken, log: () => undefined, limit: 10 });
      const failed = await request(app).get('/v1/things');
      expect(failed.status).toBe(503);
      // Its Retry-After is the store's, not a window's end: no RateLimit state names another instant (Limits rule 2).
      expectHeaders(failed, { 'Retry-After': '5', RateLimit: null });
      down = false;
      const next = await request(app).get('/v1/things');
      expect(parsed(next.headers.ratelimit).map((item) => item.r)).toEqual([9, 9]);
      inner.close();
    });

    it('fails open when configured: the request passes uncounted', async () => {
      const log = jest.fn();
      const app = limitedApp({ ...byAddress, store: failing, log, storeFailure: 'open' });
      const res = await request(app).get('/v1/things');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ things: [] });
      expectHeaders(res, { RateLimit: null });
      expect(log).toHaveBeenCalledTimes(2);
    });

    it('logs each failure as one JSON line on stderr by default, and nothing with log: false', async () => {
      const written = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
      await request(limitedApp({ ...byAddress, store: failing, application: false })).get('/v1/things');
      const lines = written.mock.calls.map(([chunk]) => String(chunk));
      expect(lines).toEqual([expect.stringContaining('"message":"rate-limit store failed"')]);
      written.mockClear();
      const res = await request(limitedApp({ ...byAddress, store: failing, application: false, log: false })).get('/v1/things');
      expect(res.status).toBe(503);
      expect(written).not.toHaveBeenCalled();
    });
  });

  describe('options, checked at start-up', () => {
    it.each([
      [{ limt: 5 }, 'rateLimit(options): received an unsupported option `limt`. Did you mean `limit`?'],
      [{ limit: 0 }, 'rateLimit(options): `limit` must be an integer at least 1; received 0.'],
      [
        { user: { windowSeconds: 1.5 } },
        'rateLimit(options): `user.windowSeconds` must be an integer from 1 to 2147483; received 1.5.',
      ],
      [{ user: { nme: 'x' } }, 'rateLimit.user(options): received an unsupported option `nme`. Did you mean `name`?'],
      [
        { application: { name: 'user' } },
        'rateLimit(options): `application.name` must be a name no other policy of this limiter has; received "user".',
      ],
      [{ user: { name: 'é' } }, 'rateLimit(options): `user.name` must be a non-empty string of printable ASCII; received "é".'],
      [
        { user: false, application: false },
        'rateLimit(options): `user` must be a policy when `application` is `false` (one policy at least); received false.',
      ],
      [{ storeFailure: 'maybe' }, 'rateLimit(options): `storeFailure` must be one of "open", "closed"; received "maybe".'],
      [{ store: {} }, 'rateLimit(options): `store` must be a CounterStore (increment, get, decrement and reset); received {}.'],
      [{ identify: 'auth' }, 'rateLimit(options): `identify` must be a function; received "auth".'],
    ])('refuses %j', (options, message) => {
      expect(() => rateLimit(options as RateLimitOptions)).toThrow(message);
    });

    it('says how to call it when used without calling it', () => {
      const req = { method: 'GET', headers: {}, on: () => undefined };
      expect(() => rateLimit(req as never)).toThrow(
        'rateLimit was used as a middleware; call it to get one: app.use(rateLimit()), not app.use(rateLimit).',
      );
    });
  });
});

describe('conventions()', () => {
  it('limits by default, with the memory store', async () => {
    const app = appWith(conventions(), (a) => a.get('/v1/things', (_req, res) => res.json({})));
    const res = await request(app).get('/v1/things');
    expect(parsed(res.headers['ratelimit-policy']).map((item) => [item.name, item.q, item.w])).toEqual([
      ['user', 100, 60],
      ['application', 100, 60],
    ]);
    expect(parsed(res.headers.ratelimit).map((item) => [item.name, item.r, item.t])).toEqual([
      ['user', 99, 60],
      ['application', 99, 60],
    ]);
  });

  it('takes the limiter’s options under rateLimit', async () => {
    const app = appWith(conventions({ rateLimit: { limit: 7, application: false } }), (a) =>
      a.get('/v1/things', (_req, res) => res.json({})),
    );
    const res = await request(app).get('/v1/things');
    expect(parsed(res.headers.ratelimit).map((item) => [item.name, item.r])).toEqual([['user', 6]]);
  });

  it('leaves it out with rateLimit: false', async () => {
    const app = appWith(conventions({ rateLimit: false }), (a) => a.get('/v1/things', (_req, res) => res.json({})));
    const res = await request(app).get('/v1/things');
    expectHeaders(res, { 'RateLimit-Policy': null, RateLimit: null });
  });
});

describe('the header items (headers.ts)', () => {
  it('writes qu only when the unit is not requests', () => {
    expect(policyItemPrefix({ name: 'a', limit: 10, windowSeconds: 60 })).toBe('"a";q=10;w=60');
    expect(policyItemPrefix({ name: 'a', limit: 10, windowSeconds: 60, quotaUnit: 'requests' })).toBe('"a";q=10;w=60');
    const bytes = policyItem(policyItemPrefix({ name: 'a', limit: 1000, windowSeconds: 1, quotaUnit: 'content-bytes' }), 'AAAA');
    expect(bytes).toBe('"a";q=1000;qu="content-bytes";w=1;pk=:AAAA:');
    expect(parsed(bytes)).toEqual([{ name: 'a', q: 1000, qu: 'content-bytes', w: 1, pk: 'AAAA' }]);
  });

  it('escapes a quote and a backslash in a policy name', () => {
    const item = stateItem(quotedName('say "hi" \\ now'), 3, 9);
    expect(item).toBe('"say \\"hi\\" \\\\ now";r=3;t=9');
    expect(parsed(item)).toEqual([{ name: 'say "hi" \\ now', r: 3, t: 9 }]);
  });
});

describe('identifyRequest()', () => {
  const req = (fields: Record<string, unknown>) => ({ headers: {}, ...fields }) as unknown as express.Request;
  const basic = { authorization: `Basic ${Buffer.from('app:secret').toString('base64')}` };

  it.each([
    ['a verified token', { auth: { subject: 'ann', clientId: 'app', scopes: [] } }, { user: 'ann', application: 'app' }],
    ['a token without client_id', { auth: { subject: 'ann', scopes: [] } }, { user: 'ann', application: undefined }],
    ['verified client credentials', { verifiedClient: { id: 'app' } }, { user: undefined, application: 'app' }],
    [
      'a token and verified credentials: the token’s client',
      { auth: { subject: 'ann', clientId: 'tok', scopes: [] }, verifiedClient: { id: 'app' } },
      { user: 'ann', application: 'tok' },
    ],
    ['an unchecked Basic header', { headers: basic }, { user: undefined, application: undefined }],
    ['a body client_id', { body: { client_id: 'app' } }, { user: undefined, application: undefined }],
  ])('reads %s', (_title, fields, expected) => {
    expect(identifyRequest(req(fields))).toEqual(expected);
  });
});

describe('limiter(): one policy outside a middleware', () => {
  const make = (store: CounterStore = new MemoryCounterStore()) =>
    limiter({ name: 'login-failures', limit: 2, windowSeconds: 300, store, partitionSecret: SECRET });

  it('consumes until the quota is used, then reports limited', async () => {
    let now = 1_800_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const guard = make();
    const first = await guard.consume('alice');
    expect(first).toEqual({
      policy: 'login-failures',
      limit: 2,
      used: 1,
      remaining: 1,
      resetAt: 1_800_000_300_000,
      resetSeconds: 300,
      limited: false,
      partitionKey: pk('alice'),
      policyItem: `"login-failures";q=2;w=300;pk=:${pk('alice')}:`,
      stateItem: `"login-failures";r=1;t=300;pk=:${pk('alice')}:`,
    });
    now += 100_500;
    expect((await guard.consume('alice')).limited).toBe(false);
    const third = await guard.consume('alice');
    expect([third.used, third.remaining, third.resetSeconds, third.limited]).toEqual([3, 0, 200, true]);
    expect((await guard.consume('bob')).limited).toBe(false);
  });

  it('peeks without counting: limited when the next hit would be refused', async () => {
    const guard = make();
    expect(await guard.peek('alice')).toMatchObject({ used: 0, remaining: 2, resetSeconds: 300, limited: false });
    await guard.consume('alice');
    expect(await guard.peek('alice')).toMatchObject({ used: 1, remaining: 1, limited: false });
    await guard.consume('alice');
    expect(await guard.peek('alice')).toMatchObject({ used: 2, remaining: 0, limited: true });
    expect(await guard.peek('alice')).toMatchObject({ used: 2 });
  });

  it('resets an identity', async () => {
    const guard = make();
    await guard.consume('alice');
    await guard.consume('alice');
    await guard.reset('alice');
    expect(await guard.consume('alice')).toMatchObject({ used: 1, limited: false });
  });

  it('turns a store failure into the stateStoreUnavailable ApiError', async () => {
    const broken: CounterStore = {
      increment: () => Promise.reject(new Error('down')),
      get: () => Promise.reject(new Error('down')),
      decrement: () => Promise.reject(new Error('down')),
      reset: () => Promise.reject(new Error('down')),
    };
    const error = await make(broken)
      .consume('alice')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 50302, cause: new Error('down') });
  });

  it.each([
    [
      { name: '', limit: 1, windowSeconds: 1 },
      'limiter(options): `name` must be a non-empty string of printable ASCII; received "".',
    ],
    [{ name: 'a', limit: -1, windowSeconds: 1 }, 'limiter(options): `limit` must be an integer at least 1; received -1.'],
    [
      { name: 'a', limit: 1, windowSeconds: 1, quotaUnit: 'bytes' },
      'limiter(options): `quotaUnit` must be one of "requests", "content-bytes", "concurrent-requests"; received "bytes".',
    ],
  ])('refuses %j', (options, message) => {
    expect(() => limiter(options as never)).toThrow(message);
  });
});

describe('tooManyRequests()', () => {
  it('makes the 429 ApiError with Retry-After equal to the t of the exceeded policy', async () => {
    let now = 1_800_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const short = limiter({ name: 'short', limit: 1, windowSeconds: 10 });
    const long = limiter({ name: 'long', limit: 1, windowSeconds: 100 });
    await short.consume('x');
    await long.consume('x');
    now += 2_000;
    const states = [await short.consume('x'), await long.consume('x')];
    const error = tooManyRequests(states);
    expect(error).toMatchObject({ status: 429, code: 42900, headers: { 'Retry-After': '98' } });
    const ownEntry = { status: 429, code: 42999, message: 'Too many of one kind.' };
    const onlyShort = tooManyRequests(states[0] as never, { error: ownEntry });
    expect(onlyShort).toMatchObject({ status: 429, code: 42999, headers: { 'Retry-After': '8' } });
    const withBody = tooManyRequests(states, { body: { error: 'invalid_grant' } });
    expect(withBody.body).toEqual({ error: 'invalid_grant' });
  });
});

describe("a 429 or 503 whose Retry-After is not the rate limiter's (rule 12.4)", () => {
  function appRefusing(error: () => ApiError): Express {
    const app = express();
    app.use(rateLimit({ limit: 2, windowSeconds: 60 }));
    app.get('/v1/other-wait', () => {
      throw error();
    });
    app.get('/v1/things', (_req, res) => {
      res.json({ things: [] });
    });
    app.use(errorHandler({ log: false }));
    return app;
  }

  it('leaves the RateLimit state off, so the answer names one instant; the policy stays', async () => {
    const ownEntry = { status: 429, code: 42999, message: 'Too many of one kind.' };
    const app = appRefusing(() => new ApiError(ownEntry, { headers: { 'Retry-After': '900' } }));
    const res = await request(app).get('/v1/other-wait');
    expect(res.status).toBe(429);
    expectHeaders(res, { 'Retry-After': '900', RateLimit: null });
    expect(res.headers['ratelimit-policy']).toMatch(/^"user";q=2;w=60;pk=:[A-Za-z0-9+/=]+:, "application";q=2;w=60;pk=/);
  });

  it("keeps RateLimit on the rate limiter's own 429, whose Retry-After is its t", async () => {
    const app = appRefusing(() => apiError('badRequest'));
    await request(app).get('/v1/things');
    await request(app).get('/v1/things');
    const refused = await request(app).get('/v1/things');
    expect(refused.status).toBe(429);
    const retryAfter = refused.headers['retry-after'];
    expect(refused.headers.ratelimit).toMatch(new RegExp(`^"user";r=0;t=${retryAfter};pk=`));
  });
});

describe('MemoryCounterStore', () => {
  let now = 0;
  let store: MemoryCounterStore;
  beforeEach(() => {
    now = 1_000_000;
    store = new MemoryCounterStore({ now: () => now });
  });
  afterEach(() => store.close());

  it('opens a window at the first hit and counts within it', async () => {
    expect(await store.increment('k', 1000)).toEqual({ count: 1, resetAt: 1_001_000 });
    now += 999;
    expect(await store.increment('k', 1000)).toEqual({ count: 2, resetAt: 1_001_000 });
    expect(await store.get('k')).toEqual({ count: 2, resetAt: 1_001_000 });
  });

  it('opens a new window once the old one ended', async () => {
    await store.increment('k', 1000);
    now += 1000;
    expect(await store.get('k')).toBeUndefined();
    expect(await store.increment('k', 1000)).toEqual({ count: 1, resetAt: 1_002_000 });
  });

  it('frees ended windows when it sweeps', async () => {
    await store.increment('a', 1000);
    await store.increment('b', 5000);
    now += 1000;
    expect(store.size).toBe(2);
    store.sweep();
    expect(store.size).toBe(1);
    expect(await store.get('b')).toEqual({ count: 1, resetAt: 1_005_000 });
  });

  it('sweeps on its own timer', async () => {
    jest.useFakeTimers();
    try {
      const timed = new MemoryCounterStore({ sweepIntervalMs: 50, now: () => now });
      await timed.increment('a', 10);
      now += 10;
      jest.advanceTimersByTime(50);
      expect(timed.size).toBe(0);
      timed.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it('forgets a reset key', async () => {
    await store.increment('k', 1000);
    await store.reset('k');
    expect(await store.get('k')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it.each([
    [
      { sweepIntervalMs: 0 },
      'MemoryCounterStore(options): `sweepIntervalMs` must be an integer from 1 to 2147483647; received 0.',
    ],
    [{ now: 5 }, 'MemoryCounterStore(options): `now` must be a function; received 5.'],
  ])('refuses %j', (options, message) => {
    expect(() => new MemoryCounterStore(options as never)).toThrow(message);
  });
});

describe('rateLimit({ skip }): what is outside the API is not counted', () => {
  const app = (): Express => {
    const made = express();
    made.use(conventions({ rateLimit: { limit: 1, skip: (req) => req.path === '/health' }, responseLinter: false }));
    made.get('/health', (_req, res) => {
      res.json({ status: 'ok' });
    });
    made.get('/v1/items', (_req, res) => {
      res.json({ items: [] });
    });
    return made;
  };

  it('passes a skipped request uncounted, with no rate-limit headers, and counts the others', async () => {
    const served = app();
    for (let i = 0; i < 3; i++) {
      const health = await request(served).get('/health');
      expect(health.status).toBe(200);
      expect(health.headers.ratelimit).toBeUndefined();
      expect(health.headers['ratelimit-policy']).toBeUndefined();
    }
    expect((await request(served).get('/v1/items')).status).toBe(200);
    expect((await request(served).get('/v1/items')).status).toBe(429);
    expect((await request(served).get('/health')).status).toBe(200);
  });

  it('refuses a skip that is not a function at start-up', () => {
    expect(() => rateLimit({ skip: '/health' as never })).toThrow(/skip/);
  });
});
