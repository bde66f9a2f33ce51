import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import express from 'express';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { ApiError, errorHandler } from '../src/errors/index.js';
import { type DocumentPart, refuse, registerDocumentPart, registerErrorEntries } from '../src/extend/index.js';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent } from '../src/index.js';
import { withConventions } from '../src/openapi/index.js';

/**
 * The registration point of express-api-conventions/extend (docs/extend.md):
 * a package's error entries, their events, and its part of the OpenAPI
 * document. This file loads no package, so nothing is registered but what
 * it registers itself (each test file has its own global object).
 */

const OWNER = 'toy-extension';
const TOY_ENTRIES = {
  toyRefused: { status: 400, code: 40090, message: 'The toy refuses.', event: { event: 'authz_fail', level: 'CRITICAL' } },
  toyQuiet: { status: 409, code: 40990, message: 'The toy is busy.' },
} as const;

const DOCUMENT = { openapi: '3.1.0', info: { title: 'T', version: '1' }, paths: {} };

function recordEvents(): { events: SecurityEvent[]; stop: () => void } {
  const events: SecurityEvent[] = [];
  const listener = (message: unknown) => events.push(message as SecurityEvent);
  subscribe(SECURITY_EVENTS_CHANNEL, listener);
  return { events, stop: () => unsubscribe(SECURITY_EVENTS_CHANNEL, listener) };
}

describe('registerErrorEntries()', () => {
  beforeAll(() => registerErrorEntries(OWNER, TOY_ENTRIES));

  it("publishes a registered entry's refusal with its event, named by the entry, and answers its status and code", async () => {
    const app = express();
    app.get('/v1/toys', (req, res, next) => refuse(req, res, next, new ApiError(TOY_ENTRIES.toyRefused)));
    app.get('/v1/busy', (req, res, next) => refuse(req, res, next, new ApiError(TOY_ENTRIES.toyQuiet)));
    app.use(errorHandler({ log: false }));
    const recorded = recordEvents();
    try {
      const refused = await request(app).get('/v1/toys');
      expect([refused.status, refused.body.errors[0].code]).toEqual([400, 40090]);
      expect((await request(app).get('/v1/busy')).status).toBe(409);
    } finally {
      recorded.stop();
    }
    expect(recorded.events.map(({ event, level, rule, status }) => ({ event, level, rule, status }))).toEqual([
      { event: 'authz_fail', level: 'CRITICAL', rule: 'toyRefused', status: 400 },
    ]);
  });

  it('lets the same package register again (its other build), replacing its own entries', () => {
    expect(() => registerErrorEntries(OWNER, TOY_ENTRIES)).not.toThrow();
  });

  it.each([
    ['a name of the library', { badRequest: { status: 400, code: 40091, message: 'x' } }, /the library's own entry/],
    ['a code of the library', { toyOther: { status: 400, code: 40000, message: 'x' } }, /the library's own entry/],
    ["another package's code", { toyOther: { status: 400, code: 40090, message: 'x' } }, /registered by toy-extension/],
    ["another package's name", { toyRefused: { status: 400, code: 40092, message: 'x' } }, /registered by toy-extension/],
  ])('refuses %s with EAC_OPTIONS_CONFLICT', (_case, entries, message) => {
    expect(() => registerErrorEntries('another-extension', entries)).toThrow(message);
    expect(() => registerErrorEntries('another-extension', entries)).toThrow(
      expect.objectContaining({ code: 'EAC_OPTIONS_CONFLICT' }),
    );
  });

  it.each([
    ['a code of another status', { status: 400, code: 40190, message: 'x' }],
    ['a status that is no error', { status: 302, code: 30200, message: 'x' }],
    ['an empty message', { status: 400, code: 40093, message: '' }],
  ])('refuses an entry with %s (EAC_OPTION_INVALID)', (_case, entry) => {
    expect(() => registerErrorEntries('another-extension', { toyWrong: entry })).toThrow(
      expect.objectContaining({ code: 'EAC_OPTION_INVALID', option: 'entries.toyWrong' }),
    );
  });
});

describe('document parts: what a package adds to withConventions()', () => {
  const toyPart = (path: string): DocumentPart => ({
    oauthErrorPaths: [path],
    describe(document, tools) {
      const paths = tools.objectAt(document, 'paths');
      tools.objectAt(paths, path).post = {
        operationId: 'toy',
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
        responses: { '200': { description: 'Done.' } },
      };
    },
  });
  type Described = { paths: Record<string, { post: { responses: Record<string, { $ref?: string }> } }> };

  it('refuses `tokenRouter` as data while no package registered its description (EAC_PEER_MISSING)', () => {
    expect(() => withConventions(DOCUMENT, { tokenRouter: { issuer: 'https://id.example' } } as never)).toThrow(
      expect.objectContaining({ code: 'EAC_PEER_MISSING', option: 'tokenRouter' }),
    );
  });

  it('refuses a `tokenRouter` that is neither a router nor options (EAC_OPTION_INVALID)', () => {
    expect(() => withConventions(DOCUMENT, { tokenRouter: 42 } as never)).toThrow(ConfigurationError);
    expect(() => withConventions(DOCUMENT, { tokenRouter: 42 } as never)).toThrow(/received number/);
  });

  it("adds the part a router carries, with RFC 6749's error shape on the part's paths only", () => {
    const router = Object.assign(() => undefined, { documentPart: toyPart('/v1/toy-tokens') });
    const described = withConventions(
      { ...DOCUMENT, paths: { '/v1/other': { post: { responses: { '200': { description: 'Done.' } } } } } },
      { tokenRouter: router } as never,
    ) as unknown as Described;
    expect(described.paths['/v1/toy-tokens']?.post.responses['400']?.$ref).toBe('#/components/responses/TokenBadRequest');
    expect(described.paths['/v1/other']?.post.responses['400']?.$ref).toBe('#/components/responses/BadRequest');
  });

  it('describes `tokenRouter` as data with the registered maker, given the options', () => {
    const seen: unknown[] = [];
    registerDocumentPart('tokenRouter', (options) => {
      seen.push(options);
      return toyPart(String(options.path));
    });
    const described = withConventions(DOCUMENT, { tokenRouter: { path: '/v1/toy' } } as never) as unknown as Described;
    expect(seen).toEqual([{ path: '/v1/toy' }]);
    expect(Object.keys(described.paths)).toEqual(['/v1/toy']);
  });
});
