import type { OutgoingHttpHeaders } from 'node:http';
import express, { type Express } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { type ConventionsOptions, conventions, PRESET_STAGES } from '../src/preset.js';
import type { StageName } from '../src/stage-names.js';

// docs/conventions.md rule 11.14 (cookies are Secure and HttpOnly) holds
// for a Set-Cookie a route hands to res.writeHead(status, headers), in both
// forms Node takes (an object, and the raw [name, value, …] array), in an
// app that turned X-Powered-By off itself, whichever other stage of the
// preset is switched off, and with every stage off but secureCookies.

type Factory = typeof express;

/** The stages on by default (outside production), but the cookie stage. */
const OTHER_STAGES: StageName[] = PRESET_STAGES.filter((stage) => stage.default !== 'off' && stage.name !== 'secureCookies').map(
  (stage) => stage.name,
);

const switches: [string, ConventionsOptions][] = [
  ['every stage on', {}],
  ...OTHER_STAGES.map((name): [string, ConventionsOptions] => [`${name} off`, { [name]: false }]),
  ['every stage off but secureCookies', Object.fromEntries(OTHER_STAGES.map((name) => [name, false]))],
];

/** How a route hands its cookies to writeHead(). */
const FORMS: [string, (res: express.Response) => void][] = [
  ['an object', (res) => res.writeHead(200, { 'Content-Type': 'text/plain', 'Set-Cookie': 'pref=dark; Path=/' })],
  [
    'an object with a list of cookies',
    (res) => res.writeHead(200, { 'Set-Cookie': ['pref=dark; Path=/', 'lang=en; Path=/; HttpOnly'] } as OutgoingHttpHeaders),
  ],
  [
    'the raw array',
    (res) =>
      res.writeHead(200, ['Content-Type', 'text/plain', 'Set-Cookie', 'pref=dark; Path=/', 'Set-Cookie', 'lang=en; Path=/']),
  ],
  ['a reason phrase and an object', (res) => res.writeHead(200, 'Fine', { 'Set-Cookie': 'pref=dark; Path=/' })],
];

function appWith(make: Factory, options: ConventionsOptions, write: (res: express.Response) => void): Express {
  const app = make() as Express;
  app.disable('x-powered-by');
  app.use(conventions(options));
  app.get('/cookie', (_req, res) => {
    write(res);
    res.end('ok');
  });
  return app;
}

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as Factory],
])('a Set-Cookie given to res.writeHead() (%s)', (_major, make) => {
  describe.each(switches)('with %s', (_switch, options) => {
    it.each(FORMS)(
      'leaves with Secure and HttpOnly when given as %s, on the first request and later ones',
      async (_form, write) => {
        const app = appWith(make, options, write);
        for (let i = 0; i < 2; i++) {
          const answer = await request(app).get('/cookie');
          expect(answer.status).toBe(200);
          const lines = answer.headers['set-cookie'] as unknown as string[];
          expect(lines.length).toBeGreaterThan(0);
          for (const line of lines) {
            expect({ line, secure: /;\s*Secure(;|$)/i.test(line), httpOnly: /;\s*HttpOnly(;|$)/i.test(line) }).toEqual({
              line,
              secure: true,
              httpOnly: true,
            });
          }
          expect(answer.headers['x-powered-by']).toBeUndefined();
        }
      },
    );
  });
});
