import { Writable } from 'node:stream';
import type { RequestHandler } from 'express';
import morgan from 'morgan';
import onHeaders from 'on-headers';
import pino from 'pino';
import { pinoHttp } from 'pino-http';
import responseTime from 'response-time';
import { freshStack, LAYOUTS, layoutApp, serve, VERSIONS } from '../support/neighbours.js';
import { expectSpecHeaders } from '../support/spec-headers.js';
import { waitUntil } from '../support/timing.js';

// Loggers and timers wrap the response (on-headers replaces res.writeHead on
// each response before the preset runs) and read its headers late (morgan's
// :res[...] tokens; pino-http's res.getHeaders() in a `finish` listener).
// Whatever they do, every answer carries the conventions' headers, on the first
// request of a fresh app and on the later ones, and what they log is what
// was sent.

const USER = { id: 7, name: 'Ada' };
const routes = (app: import('express').Express) => {
  app.get('/v1/users/:id', (_req, res) => {
    res.json(USER);
  });
};

/** A stream that keeps what is written to it, line by line. */
function lineSink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8');
      let end = pending.indexOf('\n');
      while (end >= 0) {
        lines.push(pending.slice(0, end));
        pending = pending.slice(end + 1);
        end = pending.indexOf('\n');
      }
      done();
    },
  });
  return { stream, lines };
}

/** Waits until `lines` holds `count` lines (a logger may write after the response ended). */
async function linesOf(lines: string[], count: number): Promise<string[]> {
  await waitUntil(
    () => lines.length >= count,
    () => `${count} log lines (${lines.length} so far)`,
  );
  return lines;
}

/** Three requests to a fresh app; each answer must carry every header of the conventions. */
async function threeAnswers(neighbours: RequestHandler[], version: (typeof VERSIONS)[number], layout: (typeof LAYOUTS)[number]) {
  const { app, base } = layoutApp(freshStack(version), layout, neighbours, routes);
  const served = await serve(app);
  try {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await served.fetch(`${base}/v1/users/7`));
    return answers;
  } finally {
    await served.close();
  }
}

describe.each(VERSIONS)('on %s', (version) => {
  describe.each(LAYOUTS)('with the %s', (layout) => {
    describe('morgan', () => {
      it('answers with every header of the conventions, and logs the headers that were sent', async () => {
        const sink = lineSink();
        const logger = morgan(':status :res[content-type] | :res[x-content-type-options] | :res[content-length]', {
          stream: sink.stream,
        });
        const answers = await threeAnswers([logger], version, layout);
        for (const answer of answers) {
          expect(answer.status).toBe(200);
          expect(JSON.parse(answer.text)).toEqual(USER);
          expectSpecHeaders(answer.headers);
        }
        const sent = answers.map(
          (a) =>
            `${a.status} ${a.headers['content-type']} | ${a.headers['x-content-type-options']} | ${a.headers['content-length']}`,
        );
        expect(await linesOf(sink.lines, 3)).toEqual(sent);
        expect(sink.lines[0]).toBe(`200 application/json; charset=utf-8 | nosniff | ${Buffer.byteLength(JSON.stringify(USER))}`);
      });
    });

    describe('pino-http', () => {
      it('answers with every header of the conventions, and logs res.getHeaders() as sent, without throwing', async () => {
        const sink = lineSink();
        const logger = pinoHttp({ logger: pino(sink.stream) });
        const answers = await threeAnswers([logger as unknown as RequestHandler], version, layout);
        for (const answer of answers) {
          expect(answer.status).toBe(200);
          expectSpecHeaders(answer.headers);
        }
        const logged = (await linesOf(sink.lines, 3)).map(
          (line) => JSON.parse(line) as { res: { statusCode: number; headers: Record<string, string> } },
        );
        expect(logged).toHaveLength(3);
        logged.forEach((entry, i) => {
          expect(entry.res.statusCode).toBe(200);
          expect(entry.res.headers['content-type']).toBe(answers[i]?.headers['content-type']);
          expect(entry.res.headers['content-security-policy']).toBe("script-src 'self'");
          expect(entry.res.headers['cache-control']).toBe('no-store, max-age=0');
        });
      });
    });

    describe('response-time', () => {
      it('adds its timing header next to every header of the conventions', async () => {
        // docs/conventions.md rule 3.10: a new custom header carries no X- prefix.
        const answers = await threeAnswers([responseTime({ header: 'Response-Time' })], version, layout);
        for (const answer of answers) {
          expect(answer.headers['response-time']).toMatch(/^\d+\.\d{3}ms$/);
          expectSpecHeaders(answer.headers);
        }
      });
    });

    describe('on-headers (a hand-written per-response writeHead hook)', () => {
      it('lets a hook that only reads see the headers that go out, and every header of the conventions goes out', async () => {
        const seenByHook: unknown[] = [];
        const reader: RequestHandler = (_req, res, next) => {
          onHeaders(res, function readContentType(this: typeof res) {
            seenByHook.push(this.getHeader('content-type'));
          });
          next();
        };
        const answers = await threeAnswers([reader], version, layout);
        for (const answer of answers) expectSpecHeaders(answer.headers);
        expect(seenByHook).toEqual(answers.map((answer) => answer.headers['content-type']));
      });

      it('lets a hook set its own header, and every header of the conventions still goes out', async () => {
        const timing: RequestHandler = (_req, res, next) => {
          const started = process.hrtime.bigint();
          onHeaders(res, function setTiming(this: typeof res) {
            this.setHeader('Server-Timing', `app;dur=${Number(process.hrtime.bigint() - started) / 1e6}`);
          });
          next();
        };
        const answers = await threeAnswers([timing], version, layout);
        for (const answer of answers) {
          expect(answer.headers['server-timing']).toMatch(/^app;dur=[\d.]+$/);
          expectSpecHeaders(answer.headers);
        }
      });

      it('survives a neighbour that replaces writeHead, write and end on each response', async () => {
        const wrapper: RequestHandler = (_req, res, next) => {
          const { writeHead, write, end } = res;
          res.writeHead = function wrappedWriteHead(this: typeof res, ...args: unknown[]) {
            this.setHeader('Served-By', 'wrapper');
            return (writeHead as (...a: unknown[]) => typeof res).apply(this, args);
          } as typeof res.writeHead;
          res.write = function wrappedWrite(this: typeof res, ...args: unknown[]) {
            return (write as (...a: unknown[]) => boolean).apply(this, args);
          } as typeof res.write;
          res.end = function wrappedEnd(this: typeof res, ...args: unknown[]) {
            return (end as (...a: unknown[]) => typeof res).apply(this, args);
          } as typeof res.end;
          next();
        };
        const answers = await threeAnswers([wrapper], version, layout);
        for (const answer of answers) {
          expect(answer.headers['served-by']).toBe('wrapper');
          expect(JSON.parse(answer.text)).toEqual(USER);
          expectSpecHeaders(answer.headers);
        }
      });
    });
  });
});
