import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import express, { type RequestHandler } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { toDictionary } from '../src/http/dictionary-mode.js';
import { ownMethod } from '../src/http/response-state.js';
import { type ConventionsOptions, conventions } from '../src/preset.js';
import { closeServer, listen } from './support/services.js';
import { transpileLibrary } from './support/transpile.js';

// The preset moves the properties of an Express app's request and response
// into V8 dictionaries (src/http/dictionary-mode.ts): it takes off Node's
// own `req.complete` / `res.sendDate` and puts it back. These tests hold
// what that may and may not change for the app and its neighbours, then ask
// V8 itself whether it still does what it is for.

/** The methods the preset's stages give a response of its own (test/response-state.test.ts). */
const OWN_METHODS = ['cookie', 'json', 'writeHead'];
const PRESET: ConventionsOptions = { responseLinter: false };

interface Seen {
  status: number;
  req: string[];
  res: string[];
  complete: PropertyDescriptor | undefined;
  sendDate: PropertyDescriptor | undefined;
  date: string | undefined;
}

/** What the route saw of `req` and `res` behind `middleware`, the neighbour `prepare` first. */
async function seenBehind(
  createApp: typeof express,
  middleware: RequestHandler[],
  prepare: (req: IncomingMessage, res: ServerResponse) => void = () => undefined,
): Promise<Seen> {
  const app = createApp();
  app.use((req, res, next) => {
    prepare(req, res);
    next();
  });
  if (middleware.length > 0) app.use(...middleware);
  let seen: Omit<Seen, 'status' | 'date'> | undefined;
  app.get('/v1/items/1', (req, res) => {
    seen = {
      req: Object.keys(req),
      res: Object.keys(res).filter((key) => !OWN_METHODS.includes(key)),
      complete: Object.getOwnPropertyDescriptor(req, 'complete'),
      sendDate: Object.getOwnPropertyDescriptor(res, 'sendDate'),
    };
    res.json({ id: '1' });
  });
  const answer = await request(app).get('/v1/items/1');
  return { status: answer.status, date: answer.headers.date, ...(seen as Omit<Seen, 'status' | 'date'>) };
}

const without = (keys: string[], key: string): string[] => keys.filter((k) => k !== key);

describe.each([
  ['Express 5', express],
  ['Express 4', express4],
] as const)('dictionary mode on %s', (_version, createApp) => {
  it('moves `req.complete` and `res.sendDate` to the end of Object.keys(), and changes nothing else', async () => {
    const bare = await seenBehind(createApp, []);
    const ours = await seenBehind(createApp, conventions(PRESET));
    expect(ours.status).toBe(200);
    expect(without(ours.res, 'sendDate')).toEqual(without(bare.res, 'sendDate'));
    expect(ours.res.indexOf('sendDate')).toBeGreaterThan(bare.res.indexOf('sendDate'));
    expect(without(ours.req, 'complete')).toEqual(without(bare.req, 'complete'));
    expect(ours.req.indexOf('complete')).toBeGreaterThan(bare.req.indexOf('complete'));
    expect({ complete: ours.complete, sendDate: ours.sendDate }).toEqual({ complete: bare.complete, sendDate: bare.sendDate });
  });

  it('takes nothing off with `dictionaryMode: false`: Object.keys() keeps its order', async () => {
    const bare = await seenBehind(createApp, []);
    const ours = await seenBehind(createApp, conventions({ ...PRESET, dictionaryMode: false }));
    expect(ours.status).toBe(200);
    expect({ req: ours.req, res: ours.res }).toEqual({ req: bare.req, res: bare.res });
  });

  it("keeps a neighbour's own accessor `sendDate` and `complete`", async () => {
    const getSendDate = () => true;
    const getComplete = () => false;
    const accessors = (req: IncomingMessage, res: ServerResponse) => {
      Object.defineProperty(res, 'sendDate', { get: getSendDate, set: () => undefined, enumerable: true, configurable: true });
      Object.defineProperty(req, 'complete', { get: getComplete, set: () => undefined, enumerable: true, configurable: true });
    };
    const neighbourOnly = await seenBehind(createApp, [], accessors);
    const ours = await seenBehind(createApp, conventions(PRESET), accessors);
    expect(ours.status).toBe(200);
    expect(ours.sendDate?.get).toBe(getSendDate);
    expect(ours.complete?.get).toBe(getComplete);
    expect({ req: ours.req, res: ours.res }).toEqual({ req: neighbourOnly.req, res: neighbourOnly.res });
    expect(ours.date).toBeDefined();
  });

  it('answers 200, and leaves them as they are, when a neighbour made `sendDate` and `complete` non-configurable', async () => {
    const fixed = (req: IncomingMessage, res: ServerResponse) => {
      Object.defineProperty(res, 'sendDate', { value: true, writable: true, enumerable: true, configurable: false });
      Object.defineProperty(req, 'complete', { value: req.complete, writable: true, enumerable: true, configurable: false });
    };
    const neighbourOnly = await seenBehind(createApp, [], fixed);
    const ours = await seenBehind(createApp, conventions(PRESET), fixed);
    expect(ours.status).toBe(200);
    expect({ complete: ours.complete?.configurable, sendDate: ours.sendDate?.configurable }).toEqual({
      complete: false,
      sendDate: false,
    });
    expect({ req: ours.req, res: ours.res }).toEqual({ req: neighbourOnly.req, res: neighbourOnly.res });
  });

  it("acts in a mounted sub-app, whose request and response carry the sub-app's prototypes", async () => {
    const bare = await seenBehind(createApp, []);
    const parent = createApp();
    const api = createApp();
    api.use(conventions(PRESET));
    let keys: string[] = [];
    api.get('/items/1', (_req, res) => {
      keys = Object.keys(res);
      res.json({ id: '1' });
    });
    parent.use('/v1', api);
    expect((await request(parent).get('/v1/items/1')).status).toBe(200);
    expect(keys.indexOf('sendDate')).toBeGreaterThan(bare.res.indexOf('sendDate'));
  });
});

describe('dictionary mode outside an Express app', () => {
  it('leaves a plain node:http request and response as they are', async () => {
    const seen: { before: string[][]; after: string[][] } = { before: [], after: [] };
    const { server, url } = await listen((req, res) => {
      seen.before = [Object.keys(req), Object.keys(res)];
      toDictionary(req, 'request');
      ownMethod(res as never, 'json', () => undefined);
      seen.after = [Object.keys(req), Object.keys(res).filter((key) => key !== 'json')];
      res.end();
    });
    try {
      await new Promise((resolve, reject) => http.get(url, resolve).on('error', reject));
    } finally {
      await closeServer(server);
    }
    expect(seen.after).toEqual(seen.before);
  });

  it('leaves an object it cannot add to again as it is, without throwing', () => {
    const app = { response: {} as object };
    Object.defineProperty(app.response, 'app', { value: app });
    const res = Object.preventExtensions(Object.assign(Object.create(app.response), { sendDate: true, later: 1 }));
    expect(() => toDictionary(res, 'response')).not.toThrow();
    expect(Object.keys(res)).toEqual(['sendDate', 'later']);
  });

  it('refuses a `dictionaryMode` that is not a boolean', () => {
    expect(() => conventions({ dictionaryMode: 'off' as never })).toThrow(/`dictionaryMode` must be true or false; received/);
  });
});

// --- What V8 does: a node process with --allow-natives-syntax (test/support/v8-dictionary-probe.cjs). ---

interface Facts {
  requestPrototype: boolean;
  responsePrototype: boolean;
  requestFast: boolean[];
  responseFast: boolean[];
  responsesShareMap: boolean;
  requestsShareMap: boolean;
}
type ProbeReport = Record<'Express 5' | 'Express 4', Record<'bare' | 'preset' | 'switchedOff', Facts>> & {
  'node:http': { requestFast: boolean[]; responseFast: boolean[]; responsesShareMap: boolean };
};

const ROOT = path.resolve(__dirname, '..');
const LIBRARY_DIR = path.join(ROOT, 'node_modules', '.cache', 'v8-dictionary');

function runProbe(): Promise<ProbeReport> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--allow-natives-syntax', path.join(__dirname, 'support', 'v8-dictionary-probe.cjs'), LIBRARY_DIR],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
  });
}

describe('dictionary mode in V8 (node --allow-natives-syntax)', () => {
  let report: ProbeReport;

  beforeAll(async () => {
    transpileLibrary(LIBRARY_DIR);
    report = await runProbe();
  }, 90_000);

  afterAll(() => rmSync(LIBRARY_DIR, { recursive: true, force: true }));

  describe.each(['Express 5', 'Express 4'] as const)('%s', (version) => {
    it("premise: Express gives req and res their app's prototypes per request, and then two responses share no hidden class", () => {
      const { bare } = report[version];
      expect(bare).toEqual({
        requestPrototype: true,
        responsePrototype: true,
        requestFast: [true, true],
        responseFast: [true, true],
        responsesShareMap: false,
        requestsShareMap: false,
      });
    });

    it('after the preset ran, req and res keep their properties in dictionaries', () => {
      const { preset } = report[version];
      expect({ requestFast: preset.requestFast, responseFast: preset.responseFast }).toEqual({
        requestFast: [false, false],
        responseFast: [false, false],
      });
    });

    it('with `dictionaryMode: false`, req and res keep their fast properties', () => {
      const { switchedOff } = report[version];
      expect({ requestFast: switchedOff.requestFast, responseFast: switchedOff.responseFast }).toEqual({
        requestFast: [true, true],
        responseFast: [true, true],
      });
    });
  });

  it('plain node:http responses keep the one hidden class they share', () => {
    expect(report['node:http']).toEqual({ requestFast: [true, true], responseFast: [true, true], responsesShareMap: true });
  });
});
