import express from 'express';
import request from 'supertest';
import type { SecurityHeaderRow } from '../src/security/defaults.js';

/**
 * The security headers are one table (src/security/defaults.ts): a header
 * added by one row is written by securityHeaders() under its option,
 * watched by the precedence warning, declared by the OpenAPI plan, and
 * expected by the checker, with its check and cause sentence.
 */
const ADDED: SecurityHeaderRow = {
  option: 'xExampleGuard',
  header: 'X-Example-Guard',
  value: 'on',
  takes: 'text',
  check: 'security.example-guard',
};

type Library = typeof import('../src/security/security-headers.js');
type Plan = typeof import('../src/openapi/plan.js');
type SpecValues = typeof import('../checker/src/spec-values.js');
type Catalogue = typeof import('../checker/src/catalogue.js');
type Causes = typeof import('../checker/src/causes.js');
type OpenApiChecks = typeof import('../checker/src/openapi-checks.js');

interface Loaded {
  library: Library;
  plan: Plan;
  spec: SpecValues;
  catalogue: Catalogue;
  causes: Causes;
  openapiChecks: OpenApiChecks;
}

/** Every reader of the table, loaded afresh against the table plus one row. */
function loadWithAddedRow(): Loaded {
  let loaded: Loaded | undefined;
  jest.isolateModules(() => {
    jest.doMock('../src/security/defaults.js', () => {
      const actual = jest.requireActual('../src/security/defaults.js') as typeof import('../src/security/defaults.js');
      return { ...actual, SECURITY_HEADER_TABLE: [...actual.SECURITY_HEADER_TABLE, ADDED] };
    });
    loaded = {
      library: require('../src/security/security-headers.js'),
      plan: require('../src/openapi/plan.js'),
      spec: require('../checker/src/spec-values.js'),
      catalogue: require('../checker/src/catalogue.js'),
      causes: require('../checker/src/causes.js'),
      openapiChecks: require('../checker/src/openapi-checks.js'),
    };
  });
  jest.dontMock('../src/security/defaults.js');
  return loaded as Loaded;
}

const appWith = (middleware: express.RequestHandler, front?: express.RequestHandler) => {
  const app = express();
  if (front) app.use(front);
  app.use(middleware);
  app.get('/', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
};

describe('a security header added by one row of the table', () => {
  const { library, plan, spec, catalogue, causes, openapiChecks } = loadWithAddedRow();

  it('is written by securityHeaders() with its default, the value given to its option, or not at all', async () => {
    const byDefault = await request(appWith(library.securityHeaders())).get('/');
    expect(byDefault.headers['x-example-guard']).toBe('on');
    expect(byDefault.headers['x-frame-options']).toBe('deny');
    const given = await request(appWith(library.securityHeaders({ xExampleGuard: 'strict' } as never))).get('/');
    expect(given.headers['x-example-guard']).toBe('strict');
    const off = await request(appWith(library.securityHeaders({ xExampleGuard: false } as never))).get('/');
    expect(off.headers['x-example-guard']).toBeUndefined();
    expect(library.securityHeaderValues()).toContainEqual(['X-Example-Guard', 'on']);
  });

  it('has its option checked at start-up like every other', () => {
    expect(() => library.securityHeaders({ xExampleGuard: 'a\r\nb' } as never)).toThrow(
      expect.objectContaining({ code: 'EAC_OPTION_INVALID', message: expect.stringContaining('xExampleGuard') }),
    );
  });

  it('is watched: a value set in front is replaced, and the warning names its option', async () => {
    const said: string[] = [];
    const emit = jest.spyOn(process, 'emitWarning').mockImplementation((message: string | Error) => {
      said.push(String(message));
    });
    try {
      const front: express.RequestHandler = (_req, res, next) => {
        res.setHeader('X-Example-Guard', 'theirs');
        next();
      };
      const res = await request(appWith(library.securityHeaders(), front)).get('/');
      expect(res.headers['x-example-guard']).toBe('on');
      const line = said.find((message) => message.includes('replaced X-Example-Guard: theirs'));
      expect(line).toContain('`securityHeaders: { xExampleGuard: … }`');
      expect(library.WATCHED_HEADERS).toContain('X-Example-Guard');
    } finally {
      emit.mockRestore();
    }
  });

  it('is declared by the OpenAPI plan with its value, and left out when its option is false', () => {
    expect(plan.readPlan(undefined).securityHeaders).toContainEqual(['X-Example-Guard', 'on']);
    const off = plan.readPlan({ securityHeaders: { xExampleGuard: false } as never }).securityHeaders;
    expect(off.map(([name]) => name)).not.toContain('X-Example-Guard');
  });

  it("is expected by the checker: its value, its check, its cause sentence and the OpenAPI document's headers", () => {
    expect(spec.SECURITY_HEADERS).toContainEqual({
      id: 'security.example-guard',
      header: 'X-Example-Guard',
      name: 'x-example-guard',
      value: 'on',
      caseInsensitive: false,
    });
    expect(
      (catalogue.CONFORMANCE_CHECKS as Record<string, { title: string; section: string }>)['security.example-guard'],
    ).toEqual(expect.objectContaining({ title: '`X-Example-Guard: on`', section: 'Security response headers' }));
    expect(causes.CONFORMANCE_CAUSES['security-headers'].elsewhere).toContain('`X-Example-Guard: on`');
    expect(openapiChecks.CONVENTION_HEADERS).toContain('x-example-guard');
  });
});

describe('the table as it ships', () => {
  it('has one row per option and per header', () => {
    const { SECURITY_HEADER_TABLE } = jest.requireActual(
      '../src/security/defaults.js',
    ) as typeof import('../src/security/defaults.js');
    const options = SECURITY_HEADER_TABLE.map((row) => row.option);
    const headers = SECURITY_HEADER_TABLE.map((row) => row.header.toLowerCase());
    expect(new Set(options).size).toBe(options.length);
    expect(new Set(headers).size).toBe(headers.length);
  });
});
