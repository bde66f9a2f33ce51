import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import express4 from 'express4';
import { checkConventions } from '../../src/conformance/index.js';
import {
  apiError,
  cacheControl,
  checkRoutes,
  conventions,
  entityTag,
  errorHandler,
  hashPassword,
  idPair,
  MemoryClientStore,
  MemoryUserStore,
  notFound,
  notModified,
  preconditions,
  requireScope,
  setValidators,
} from '../../src/index.js';

/**
 * docs/guides/getting-started.md, step by step, as written: the app it
 * builds follows SPEC.md on Express 5, and on Express 4 with the wrapper the
 * guide gives for async handlers.
 */

interface User {
  id: bigint;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

const USERS = new Map<string, User>([
  ['4611686018427387911', { id: 4611686018427387911n, name: 'Ada', createdAt: new Date(0), updatedAt: new Date(1000) }],
]);
const find = async (id: string) => USERS.get(id);
const represent = (user: User) => ({ ...idPair(user.id), name: user.name, createdAt: user.createdAt });

// Step 5's stores and keys.
const keys = [{ kid: 'k1', algorithm: 'HS256' as const, secret: 'a-test-secret-of-at-least-32-bytes!!' }];
const token = { keys, issuer: 'https://api.example.com', audience: 'https://api.example.com' };

type Handler = (req: Request, res: Response) => Promise<unknown>;

async function guideApp(factory: () => Express, handle: (fn: Handler) => RequestHandler): Promise<Express> {
  const users = new MemoryUserStore();
  await users.add({
    username: 'alice',
    subject: '4611686018427387911',
    passwordHash: await hashPassword('pw-of-alice', { cost: 4 }),
  });
  const clients = new MemoryClientStore();

  const app = factory();
  app.disable('x-powered-by');
  app.use(
    conventions({
      cors: { origins: ['https://app.example.com'] },
      authentication: token,
      rateLimit: { limit: 100, windowSeconds: 60 },
      tokenEndpoint: { ...token, users, clients, passwordCost: 4 },
    }),
  );
  app.get(
    '/v1/users/:id',
    cacheControl('no-cache'),
    handle(async (req, res) => {
      const user = await find(String(req.params.id));
      if (!user) throw apiError('resourceNotFound');
      setValidators(res, { etag: entityTag(user.updatedAt), lastModified: user.updatedAt });
      if (notModified(req, res)) return;
      res.json(represent(user));
    }),
  );
  const current = async (req: Request) => {
    const user = await find(String(req.params.id));
    return user && { etag: entityTag(user.updatedAt), lastModified: user.updatedAt };
  };
  app.patch(
    '/v1/users/:id',
    requireScope('users:write'),
    preconditions({ current }),
    handle(async (_req, res) => res.json({ updated: true })),
  );
  app.use(notFound(), errorHandler());
  return app;
}

describe.each([
  ['Express 5', () => express(), (fn: Handler): RequestHandler => fn as unknown as RequestHandler],
  [
    'Express 4',
    () => express4() as unknown as Express,
    // The guide's wrapper: Express 4 does not catch a rejected promise.
    (fn: Handler): RequestHandler =>
      (req: Request, res: Response, next: NextFunction) =>
        void Promise.resolve(fn(req, res)).catch(next),
  ],
])('the getting-started app on %s', (_name, factory, handle) => {
  it('every route follows the SPEC.md path rules', async () => {
    expect(checkRoutes(await guideApp(factory, handle), { report: 'none' })).toEqual([]);
  });

  it('the API follows SPEC.md', async () => {
    const report = await checkConventions(await guideApp(factory, handle), {
      origin: 'https://app.example.com',
      resource: '/v1/users/4611686018427387911',
      tokenEndpoint: '/v1/oauth2/token',
      allowWrites: true,
      credentials: { username: 'alice', password: 'pw-of-alice' },
      onProgress: () => {},
    });
    expect(report.failures).toEqual([]);
  });
});
