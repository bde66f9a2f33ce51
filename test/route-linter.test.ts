import express, { type Express, type Router } from 'express';
import express4 from 'express4';
import { ConfigurationError } from '../src/config/index.js';
import { checkRoutes, RouteConventionError, type RouteFinding } from '../src/lint/index.js';

type ExpressModule = { (): Express; Router: () => Router };

const noop = () => undefined;

/** An app whose routes are the given paths (GET), registered on a router mounted at `mount`. */
const appWith = (factory: ExpressModule, paths: readonly string[], mount = '/'): Express => {
  const app = factory();
  const router = factory.Router();
  for (const path of paths) router.get(path, noop);
  app.use(mount, router);
  return app;
};

const finding = (
  path: string,
  rule: RouteFinding['rule'],
  message: string,
  suggestion: string,
  methods = 'GET',
): RouteFinding => ({
  route: `${methods} ${path}`,
  path,
  rule,
  message,
  suggestion,
});

const lint = (app: unknown) => checkRoutes(app, { report: 'none' });

describe.each([
  ['Express 5', express as unknown as ExpressModule],
  ['Express 4', express4 as unknown as ExpressModule],
])('checkRoutes() on %s', (_name, factory) => {
  describe('routes that follow every path rule', () => {
    it('reports nothing', () => {
      const app = factory();
      app.get('/v1/users', noop);
      app.post('/v1/users', noop);
      app.get('/v1/users/search', noop);
      app.route('/v1/users/:id').get(noop).put(noop).patch(noop).delete(noop);
      app.get('/v1/users/:id/orders', noop);
      app.get('/v1/user-profiles', noop);
      app.get('/v2/people/:id', noop);
      app.post('/v1/oauth2/token', noop);
      expect(lint(app)).toEqual([]);
    });

    it('reports nothing for the reference server routes, /v1/me excepted', () => {
      const app = factory();
      app.post('/v1/oauth2/token', noop);
      app.route('/v1/users').get(noop).post(noop);
      app.get('/v1/users/search', noop);
      app.route('/v1/users/:id').get(noop).put(noop).patch(noop).delete(noop);
      app.get('/v1/me', noop);
      app.post('/v1/exports', noop);
      app.get('/v1/exports/:id', noop);
      app.post('/v1/sessions', noop);
      app.route('/v1/sessions/current').get(noop).delete(noop);
      // `me` is the caller alias (/v1/users/{caller}): no exception needed.
      expect(lint(app)).toEqual([]);
    });
  });

  describe('Path rule 1 and Versioning: v<major> right after the host', () => {
    it('reports a path without a version', () => {
      expect(lint(appWith(factory, ['/users']))).toEqual([
        finding('/users', 'version', 'The path has no version; it must start with /v<major>, such as /v1.', '/v1/users'),
      ]);
    });

    it('reports a version that does not follow the host', () => {
      expect(lint(appWith(factory, ['/api/v1/users']))).toEqual([
        finding(
          '/api/v1/users',
          'version',
          'The version must follow the host name directly; "api" comes before it.',
          '/v1/users',
        ),
      ]);
    });

    it('reports a minor version', () => {
      expect(lint(appWith(factory, ['/v1.2/users']))).toEqual([
        finding('/v1.2/users', 'version', '"v1.2" is not a major version; write only the major number, such as v1.', '/v1/users'),
      ]);
    });
  });

  describe('Path rule 2: all lower case', () => {
    it('reports upper-case letters and suggests hyphen-joined words', () => {
      expect(lint(appWith(factory, ['/v1/userProfiles']))).toEqual([
        finding(
          '/v1/userProfiles',
          'lowerCase',
          '"userProfiles" has upper-case letters; paths are all lower case, words joined with "-".',
          '/v1/user-profiles',
        ),
        finding('/v1/userProfiles', 'hyphen', '"userProfiles" joins words by case; join them with "-".', '/v1/user-profiles'),
      ]);
    });

    it('does not read parameter names', () => {
      expect(lint(appWith(factory, ['/v1/users/:userId']))).toEqual([]);
    });
  });

  describe('Path rule 3: plural nouns, no verbs, no percent-encoding', () => {
    it('reports a singular collection name', () => {
      expect(lint(appWith(factory, ['/v1/category/:id']))).toEqual([
        finding(
          '/v1/category/:id',
          'plural',
          '"category" is singular; resource names are plural nouns, such as "categories".',
          '/v1/categories/:id',
        ),
      ]);
    });

    it('does not make a plural of a word that qualifies a collection (legacy, internal)', () => {
      expect(lint(appWith(factory, ['/v1/legacy/:id', '/v1/internal-order/:id']))).toEqual([
        finding(
          '/v1/legacy/:id',
          'plural',
          '"legacy" qualifies a collection rather than naming one; the segment after the version is a plural noun (/v1/orders): name the collection, or except this segment for "plural" while it stays.',
          '/v1/legacy/:id',
        ),
        finding(
          '/v1/internal-order/:id',
          'plural',
          '"internal-order" is singular; resource names are plural nouns, such as "internal-orders".',
          '/v1/internal-orders/:id',
        ),
      ]);
    });

    it('checks sub-collections too, but not the id position', () => {
      expect(lint(appWith(factory, ['/v1/users/:id/address', '/v1/sessions/current']))).toEqual([
        finding(
          '/v1/users/:id/address',
          'plural',
          '"address" is singular; resource names are plural nouns, such as "addresses".',
          '/v1/users/:id/addresses',
        ),
      ]);
    });

    it('reports a verb and suggests the resource', () => {
      expect(lint(appWith(factory, ['/v1/create-users', '/v1/users/:id/activate']))).toEqual([
        finding(
          '/v1/create-users',
          'noVerb',
          '"create-users" starts with the verb "create"; name the resource and let the HTTP method say the action.',
          '/v1/users',
        ),
        finding(
          '/v1/users/:id/activate',
          'noVerb',
          '"activate" is a verb; name the resource and let the HTTP method say the action.',
          '/v1/users/:id',
        ),
      ]);
    });

    it('reports percent-encoded characters', () => {
      expect(lint(appWith(factory, ['/v1/caf%C3%A9s']))).toEqual([
        finding(
          '/v1/caf%C3%A9s',
          'noPercentEncoding',
          '"caf%C3%A9s" holds a percent-encoded or non-ASCII character; use plain lower-case ASCII words.',
          '/v1/caf%C3%A9s',
        ),
      ]);
    });
  });

  describe('Path rule 4: words joined with a hyphen', () => {
    it('reports underscores', () => {
      expect(lint(appWith(factory, ['/v1/user_profiles']))).toEqual([
        finding('/v1/user_profiles', 'hyphen', '"user_profiles" joins words with "_"; join them with "-".', '/v1/user-profiles'),
      ]);
    });
  });

  describe('Path rule 6: search endpoints use the segment search', () => {
    it('reports another word for a search', () => {
      expect(lint(appWith(factory, ['/v1/users/find']))).toEqual([
        finding(
          '/v1/users/find',
          'search',
          '"find" looks like a search; a search endpoint uses the segment "search" (with q).',
          '/v1/users/search',
        ),
      ]);
    });
  });

  describe('Path rule 7: no list segment', () => {
    it('reports list, alone or in a name', () => {
      expect(lint(appWith(factory, ['/v1/users/list', '/v1/order-list']))).toEqual([
        finding('/v1/users/list', 'noList', '"list" is a list segment; the collection itself is the list.', '/v1/users'),
        finding('/v1/order-list', 'noList', '"order-list" is a list segment; the collection itself is the list.', '/v1/orders'),
      ]);
    });
  });

  describe('Path rule 8: no implementation technology', () => {
    it('reports a file extension and a technology name', () => {
      expect(lint(appWith(factory, ['/v1/users.php', '/v1/servlet/users']))).toEqual([
        finding(
          '/v1/users.php',
          'noTechnology',
          '"users.php" has a file extension; the URI never reveals the implementation (ask for a format with Accept).',
          '/v1/users',
        ),
        finding(
          '/v1/servlet/users',
          'noTechnology',
          '"servlet" names an implementation technology; name the resource instead.',
          '/v1/users',
        ),
      ]);
    });
  });

  describe('Path rule 9: one form throughout', () => {
    it('reports a resource named singular in one route and plural in another', () => {
      expect(lint(appWith(factory, ['/v1/users', '/v1/user/:id']))).toEqual([
        finding(
          '/v1/user/:id',
          'plural',
          '"user" is singular; resource names are plural nouns, such as "users".',
          '/v1/users/:id',
        ),
        finding(
          '/v1/user/:id',
          'consistent',
          '"user" and "users" name the same resource; use "users" throughout.',
          '/v1/users/:id',
        ),
      ]);
    });
  });

  describe('the shape /v<major>/<collection>[/<id>][/<sub-collection>]', () => {
    it('reports a parameter where a collection name belongs, and a path deeper than the shape', () => {
      expect(lint(appWith(factory, ['/v1/:collection', '/v1/users/:id/orders/:orderId']))).toEqual([
        finding(
          '/v1/:collection',
          'shape',
          '":collection" stands where a collection name belongs; collection names are fixed plural nouns.',
          '/v1/:collection',
        ),
        finding(
          '/v1/users/:id/orders/:orderId',
          'shape',
          'The path is 4 segments deep after the version; the path shape of docs/conventions.md §3.1 stops at a sub-collection.',
          '/v1/users/:id/orders/:orderId',
        ),
      ]);
    });
  });

  describe('mounted routers', () => {
    it('reads the mount path, parameters included', () => {
      expect(lint(appWith(factory, ['/user'], '/v1/tenants/:tenant'))).toEqual([
        finding(
          '/v1/tenants/:tenant/user',
          'plural',
          '"user" is singular; resource names are plural nouns, such as "users".',
          '/v1/tenants/:tenant/users',
        ),
      ]);
    });

    it('reads routers inside routers', () => {
      const app = factory();
      const outer = factory.Router();
      const inner = factory.Router();
      inner.route('/items').get(noop).post(noop);
      outer.use('/shop', inner);
      app.use('/v1', outer);
      expect(lint(app)).toEqual([
        finding(
          '/v1/shop/items',
          'plural',
          '"shop" is singular; resource names are plural nouns, such as "shops".',
          '/v1/shops/items',
          'GET, POST',
        ),
      ]);
    });

    it('checks a router on its own with a prefix', () => {
      const router = factory.Router();
      router.get('/user', noop);
      expect(checkRoutes(router, { report: 'none', prefix: '/v1' })).toEqual([
        finding('/v1/user', 'plural', '"user" is singular; resource names are plural nouns, such as "users".', '/v1/users'),
      ]);
    });

    it('reports a regular-expression route as one it cannot check', () => {
      const app = factory();
      app.get(/^\/v1\/things$/, noop);
      expect(lint(app)).toEqual([
        {
          route: '/^\\/v1\\/things$/',
          path: '/^\\/v1\\/things$/',
          rule: 'shape',
          message: 'A regular-expression path cannot be checked against the path rules; write it as a path string.',
          suggestion: '/v1/<collection>[/:id][/<sub-collection>]',
        },
      ]);
    });
  });

  describe('reporting', () => {
    const bad = () => appWith(factory, ['/v1/user']);

    it('throws every finding at once by default, for start-up', () => {
      expect(() => checkRoutes(bad())).toThrow(RouteConventionError);
      expect(() => checkRoutes(bad())).toThrow(
        '1 finding against the path rules (docs/conventions.md §3):\n  GET /v1/user: "user" is singular; resource names are plural nouns, such as "users". Suggestion: /v1/users (Path rule 3: resource names are plural nouns.)',
      );
    });

    it('logs each finding through the log hook', () => {
      const log = jest.fn();
      const findings = checkRoutes(bad(), { report: 'log', log });
      expect(log.mock.calls).toEqual(findings.map((f) => [f]));
      expect(findings).toHaveLength(1);
    });

    it('accepts exceptions per rule, and ignored paths', () => {
      const app = appWith(factory, ['/v1/me', '/v1/user', '/health']);
      expect(checkRoutes(app, { report: 'none', exceptions: { plural: ['me', 'user'] }, ignore: ['/health'] })).toEqual([]);
      expect(checkRoutes(app, { report: 'none', ignore: [/^\/(?!v\d)/, '/v1/user'], exceptions: { plural: ['me'] } })).toEqual(
        [],
      );
    });
  });
});

describe('path syntax of each Express version', () => {
  it('reads path-to-regexp 8 optional groups and named wildcards (Express 5)', () => {
    const app = express();
    app.get('/v1/users{/:id}', noop);
    app.get('/v1/files/*path', noop);
    app.get('/v1/report{.:format}', noop);
    expect(lint(app)).toEqual([
      finding(
        '/v1/report{.:format}',
        'noTechnology',
        '"report.:format" has a file extension; the URI never reveals the implementation (ask for a format with Accept).',
        '/v1/reports',
      ),
      finding(
        '/v1/report{.:format}',
        'plural',
        '"report.:format" is singular; resource names are plural nouns, such as "reports".',
        '/v1/reports',
      ),
    ]);
  });

  it('reads optional and pattern parameters (Express 4)', () => {
    const app = express4();
    app.get('/v1/users/:id?', noop);
    app.get('/v1/orders/:id(\\d+)', noop);
    app.get('/v1/files/*', noop);
    expect(lint(app)).toEqual([]);
  });
});

describe('checkRoutes() options', () => {
  it.each([
    [{ report: 'warn' }, '`report` must be one of "throw", "log", "none"; received "warn".'],
    [{ exceptions: { plurals: ['me'] } }, '`exceptions` must be keyed by rule names'],
    [{ exceptions: { plural: 'me' } }, '`exceptions.plural` must be an array of path segments; received "me".'],
    [{ ignore: '/health' }, '`ignore` must be an array of paths and regular expressions'],
    [{ log: 'console' }, '`log` must be a function'],
  ])('refuses %j', (options, message) => {
    expect(() => checkRoutes(express(), options as never)).toThrow(ConfigurationError);
    expect(() => checkRoutes(express(), options as never)).toThrow(message);
  });

  it('refuses something that is not an app or a router', () => {
    expect(() => checkRoutes({})).toThrow('`appOrRouter` must be an Express app or router; received {}.');
  });

  it('reads an app that has no routes yet', () => {
    expect(checkRoutes(express())).toEqual([]);
    expect(checkRoutes(express4())).toEqual([]);
  });
});
