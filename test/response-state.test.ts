import express, { type Express, type RequestHandler } from 'express';
import request from 'supertest';
import { caching } from '../src/caching/index.js';
import { jsonResponses } from '../src/json/json-responses.js';
import { conventions } from '../src/preset.js';
import { parseBodies } from '../src/request/body-parsers.js';
import { secureCookies } from '../src/security/cookies.js';

// The per-response behaviour of jsonResponses(), secureCookies() and
// caching() lives in res.locals and in the response's own `json`, `cookie`
// and `writeHead` (never on a shared prototype); it must not leak
// to responses that never passed the middleware, in the same app or in
// another one.

const ownKeysAt = (middlewares: RequestHandler[]): Promise<{ res: string[]; req: string[] }> => {
  const app = express();
  if (middlewares.length > 0) app.use(...middlewares);
  app.get('/keys', (req, res) => {
    res.end(JSON.stringify({ res: Reflect.ownKeys(res).map(String), req: Reflect.ownKeys(req).map(String) }));
  });
  return request(app)
    .get('/keys')
    .then((answer) => JSON.parse(answer.text));
};

const withArrayRoute = (app: Express, path: string): void => {
  app.get(path, (_req, res) => {
    res.json(['an', 'array']);
  });
};

describe('per-response state', () => {
  it('adds to the response only the methods it stands in front of, and nothing to the request', async () => {
    const bare = await ownKeysAt([]);
    const ours = await ownKeysAt([caching(), secureCookies(), jsonResponses(), ...parseBodies()]);
    const added = ours.res.filter((key) => !bare.res.includes(key)).sort();
    expect(added).toEqual(['cookie', 'json', 'writeHead']);
    expect([...ours.req].sort()).toEqual([...bare.req].sort());
  });

  it('leaves nothing of its own on the request or the response when the preset moves them into dictionaries', async () => {
    const bare = await ownKeysAt([]);
    const ours = await ownKeysAt(conventions());
    expect(ours.res.filter((key) => !bare.res.includes(key)).sort()).toEqual(['cookie', 'json', 'writeHead']);
    expect(bare.res.filter((key) => !ours.res.includes(key))).toEqual([]);
    expect([...ours.req].sort()).toEqual([...bare.req].sort());
  });

  it("jsonResponses() in one app leaves another app's res.json() alone", async () => {
    const ours = express();
    ours.use(jsonResponses());
    withArrayRoute(ours, '/list');
    const other = express();
    withArrayRoute(other, '/list');
    // Ours refuses a top-level array (rule 2.1); the other app's Express sends it.
    expect((await request(ours).get('/list')).status).toBe(500);
    const answer = await request(other).get('/list');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(['an', 'array']);
  });

  it('jsonResponses() leaves the responses of its app that never passed it alone', async () => {
    const app = express();
    withArrayRoute(app, '/before');
    app.use('/api', jsonResponses());
    withArrayRoute(app, '/api/list');
    withArrayRoute(app, '/elsewhere');
    expect((await request(app).get('/api/list')).status).toBe(500);
    expect((await request(app).get('/before')).status).toBe(200);
    expect((await request(app).get('/elsewhere')).status).toBe(200);
  });

  it('jsonResponses() in a parent app applies in a mounted sub-app', async () => {
    const parent = express();
    const child = express();
    withArrayRoute(child, '/list');
    parent.use(jsonResponses());
    parent.use('/child', child);
    expect((await request(parent).get('/child/list')).status).toBe(500);
  });

  it('secureCookies() leaves the cookies of responses that never passed it alone', async () => {
    const app = express();
    const setCookie: RequestHandler = (_req, res) => {
      res.cookie('a', 'b');
      res.end();
    };
    app.get('/plain', setCookie);
    app.use('/secure', secureCookies({ sameSite: 'strict' }));
    app.get('/secure/cookie', setCookie);
    expect((await request(app).get('/secure/cookie')).headers['set-cookie']).toEqual([
      'a=b; Path=/; HttpOnly; Secure; SameSite=Strict',
    ]);
    expect((await request(app).get('/plain')).headers['set-cookie']).toEqual(['a=b; Path=/']);
  });

  it('the first secureCookies() a response passes sets its SameSite default', async () => {
    const app = express();
    app.use(secureCookies({ sameSite: 'strict' }), secureCookies({ sameSite: 'lax' }));
    app.get('/cookie', (_req, res) => {
      res.cookie('a', 'b');
      res.end();
    });
    expect((await request(app).get('/cookie')).headers['set-cookie']).toEqual(['a=b; Path=/; HttpOnly; Secure; SameSite=Strict']);
  });

  it("caching() tags only the responses that passed it (the JSON writer reads each response's own step)", async () => {
    const app = express();
    app.use(jsonResponses());
    app.get('/untagged', (_req, res) => {
      res.json({ a: 1 });
    });
    app.use(caching());
    app.get('/tagged', (_req, res) => {
      res.json({ a: 1 });
    });
    expect((await request(app).get('/tagged')).headers.etag).toMatch(/^"/);
    expect((await request(app).get('/untagged')).headers.etag).toBeUndefined();
  });
});
