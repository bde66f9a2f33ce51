import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import express from 'express';
import { errorHandler } from '../src/errors/index.js';
import { jsonResponses } from '../src/json/index.js';
import { parseBodies } from '../src/request/index.js';
import { answerParserErrors, securityHeaders } from '../src/security/index.js';
import { HTTP_DATE } from './helpers.js';
import { SPEC_SECURITY_HEADERS_LOWER_CASE as SECURITY } from './support/spec-headers.js';

/** A raw HTTP answer, read off the socket until the server closed it. */
interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Whether the server closed the connection after the answer. */
  readonly closed: boolean;
}

/** Sends raw bytes (in the given pieces, `pauseMs` apart) and reads the answer until the connection closes. */
function exchange(port: number, pieces: readonly (string | Buffer)[], pauseMs = 0): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the server did not close the connection within 5 s'));
    }, 5000);
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may close while bytes are still being sent: that is the point.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, end === -1 ? text.length : end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = end === -1 ? '' : Buffer.from(text.slice(end + 4), 'latin1').toString('utf8');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closed: true });
    });
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (socket.destroyed) break;
        socket.write(piece);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  });
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

const appWithBodies = () => {
  const app = express();
  app.use(securityHeaders(), jsonResponses(), ...parseBodies());
  app.post('/v1/echo', (req, res) => {
    res.json({ body: req.body });
  });
  app.use(errorHandler({ log: false }));
  return app;
};

describe('answerParserErrors(): what Node refuses before Express is answered in JSON', () => {
  const server = http.createServer(
    // The timeouts are checked every connectionsCheckingInterval; short here so the 408 test is quick.
    { headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 },
    appWithBodies(),
  );
  answerParserErrors(server, { production: false });
  let port = 0;
  beforeAll(async () => {
    port = await listen(server);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const expectJsonRefusal = (answer: RawAnswer, status: number, code: number, parserError: string) => {
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [{ message: expect.any(String), code, detail: { parserError } }],
    });
    expect(answer.headers).toMatchObject({
      ...SECURITY,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(answer.body)),
      'cache-control': 'no-store, max-age=0',
      connection: 'close',
    });
    expect(answer.headers.date).toMatch(HTTP_DATE);
    expect(answer.closed).toBe(true);
  };

  it.each([
    ['a 16 KB query string', `GET /v1/echo?q=${'a'.repeat(16 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['a 100 KB query string', `GET /v1/echo?q=${'a'.repeat(100 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['a 100 KB header', `GET /v1/echo HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(100 * 1024)}\r\n\r\n`],
  ])('%s gets 431 JSON with the security headers, then the connection closes', async (_case, raw) => {
    expectJsonRefusal(await exchange(port, [raw]), 431, 43100, 'HPE_HEADER_OVERFLOW');
  });

  it('a malformed request gets 400 JSON (code 40013)', async () => {
    const answer = await exchange(port, ['GET /v1/echo HTTP/1.1\r\nHost: x\r\nBad Header Name: y\r\n\r\n']);
    expectJsonRefusal(answer, 400, 40013, 'HPE_INVALID_HEADER_TOKEN');
  });

  it('headers that never end get 408 JSON once headersTimeout passes', async () => {
    const answer = await exchange(port, ['GET /v1/echo HTTP/1.1\r\nHost: x\r\n']);
    expectJsonRefusal(answer, 408, 40800, 'ERR_HTTP_REQUEST_TIMEOUT');
  });

  it('leaves out detail in production', async () => {
    const quiet = http.createServer(appWithBodies());
    answerParserErrors(quiet, { production: true });
    const quietPort = await listen(quiet);
    try {
      const answer = await exchange(quietPort, [`GET /?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
      expect(answer.status).toBe(431);
      expect(JSON.parse(answer.body)).toEqual({
        errors: [{ message: 'The request line and header fields are too large.', code: 43100 }],
      });
    } finally {
      await new Promise<void>((resolve) => quiet.close(() => resolve()));
    }
  });

  it('without it, Node answers 431 with no body, no Content-Type and no security headers (what the helper fixes)', async () => {
    const bare = http.createServer(appWithBodies());
    const barePort = await listen(bare);
    try {
      const answer = await exchange(barePort, [`GET /?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
      expect(answer.status).toBe(431);
      expect(answer.body).toBe('');
      expect(answer.headers['content-type']).toBeUndefined();
      expect(answer.headers['x-content-type-options']).toBeUndefined();
    } finally {
      await new Promise<void>((resolve) => bare.close(() => resolve()));
    }
  });

  it('refuses wrong options at start-up', () => {
    expect(() => answerParserErrors(http.createServer(), { production: 'yes' as never })).toThrow(
      '`production` must be true or false',
    );
    expect(() =>
      answerParserErrors(http.createServer(), {
        securityHeaders: { contentSecurityPolicy: { directives: { scriptSrc: [() => "'nonce-x'"] } } },
      }),
    ).toThrow('answerParserErrors(options): `contentSecurityPolicy` must have fixed directives');
    expect(() => answerParserErrors(http.createServer(), { securityHeader: {} } as never)).toThrow(
      'Did you mean `securityHeaders`?',
    );
  });

  describe('parseBodies(): bodies that are not UTF-8 get 400 JSON (code 40012)', () => {
    const post = (type: string, body: Buffer) =>
      exchange(port, [
        Buffer.concat([
          Buffer.from(
            `POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
          ),
          body,
        ]),
      ]);
    const refusedWith = (answer: RawAnswer, detail: string) => {
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
        errors: [
          { message: 'The request body is not valid UTF-8 (or holds an unpaired surrogate escape).', code: 40012, detail },
        ],
      });
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    };

    it('refuses JSON with a byte that is not UTF-8', async () => {
      const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
      refusedWith(await post('application/json', body), 'the JSON body holds bytes that are not UTF-8');
    });

    it('refuses JSON with an overlong or surrogate UTF-8 encoding', async () => {
      const overlong = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
      refusedWith(await post('application/json', overlong), 'the JSON body holds bytes that are not UTF-8');
      const surrogate = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
      refusedWith(await post('application/json', surrogate), 'the JSON body holds bytes that are not UTF-8');
    });

    it.each([
      ['a lone high surrogate', '{"a":"\\ud800"}'],
      ['a lone low surrogate', '{"a":"\\uDC00x"}'],
      ['a high surrogate followed by a letter', '{"a":"\\uD83Dx"}'],
      ['a high surrogate at the end of a key', '{"\\ud83d":1}'],
    ])('refuses JSON with %s escape', async (_case, text) => {
      refusedWith(await post('application/json', Buffer.from(text)), 'the JSON body holds a \\u escape of an unpaired surrogate');
    });

    it('accepts a surrogate pair, an escaped backslash before "ud800", and plain UTF-8', async () => {
      const answer = await post('application/json', Buffer.from('{"a":"\\ud83d\\ude00","b":"\\\\ud800","c":"Zoë"}'));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ body: { a: '😀', b: '\\ud800', c: 'Zoë' } });
    });

    it('refuses a form with raw bytes that are not UTF-8', async () => {
      const body = Buffer.concat([Buffer.from('name='), Buffer.from([0xe9])]);
      refusedWith(await post('application/x-www-form-urlencoded', body), 'the form body holds bytes that are not UTF-8');
    });

    it('refuses a form whose percent-escapes decode to bytes that are not UTF-8', async () => {
      refusedWith(
        await post('application/x-www-form-urlencoded', Buffer.from('name=%FF&x=1')),
        'a percent-escape of the form body decodes to bytes that are not UTF-8',
      );
      refusedWith(
        await post('application/x-www-form-urlencoded', Buffer.from('name=%C3&x=%A9')),
        'a percent-escape of the form body decodes to bytes that are not UTF-8',
      );
    });

    it('accepts a form with UTF-8 percent-escapes and a lone percent sign', async () => {
      const answer = await post('application/x-www-form-urlencoded', Buffer.from('name=Zo%C3%AB&rate=100%'));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).body.name).toBe('Zoë');
    });
  });
});
