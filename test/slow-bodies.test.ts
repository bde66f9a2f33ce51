import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { ConfigurationError } from '../src/config/index.js';
import { errorHandler, notFound } from '../src/errors/index.js';
import { jsonResponses } from '../src/json/index.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../src/request/body-parsers.js';
import { parseBodies } from '../src/request/index.js';
import { serverTimeouts } from '../src/security/index.js';
import { SERVER_TIMEOUTS } from '../src/security/server-timeouts.js';
import { type RawAnswer, rawExchange } from './support/raw-http.js';
import { closeServer } from './support/services.js';
import { MACHINE_ALLOWANCE_MS } from './support/timing.js';

const BODY_TIMEOUT_MS = 1000;

const echo = (withErrorHandler: boolean) => {
  const app = express();
  app.use(jsonResponses(), ...parseBodies({ bodyTimeoutMs: BODY_TIMEOUT_MS }));
  app.post('/v1/users', (req, res) => {
    res.status(201).json({ body: req.body ?? null });
  });
  if (withErrorHandler) app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
};

async function serve(app: express.Express): Promise<{ server: Server; port: number }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const head = (type: string, length: number) =>
  `POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;

const expect408 = (answer: RawAnswer) => {
  expect(answer.status).toBe(408);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers.connection).toBe('close');
  // Alone, outside production, the error also carries its `detail`.
  expect(JSON.parse(answer.body)).toEqual({
    errors: [expect.objectContaining({ message: 'The request took too long to arrive.', code: 40800 })],
  });
  expect(answer.closed).toBe(true);
};

describe('parseBodies() body-read deadline', () => {
  for (const withErrorHandler of [true, false]) {
    describe(withErrorHandler ? 'with errorHandler() after it' : 'alone', () => {
      let server: Server;
      let port: number;
      beforeAll(async () => {
        ({ server, port } = await serve(echo(withErrorHandler)));
      });
      afterAll(() => closeServer(server));

      it('answers 408 JSON and closes the connection when the body trickles at 10 bytes/s', async () => {
        // 1 byte every 100 ms of a declared 100,000: bounded to 60 pieces (6 s, past the deadline and the allowance).
        const trickle = Array.from({ length: 60 }, () => 'a');
        const answer = await rawExchange(port, { pieces: [head('application/json', 100_000), ...trickle], pauseMs: 100 });
        expect408(answer);
        // Not before the deadline (less a timer's rounding), and at it.
        expect(answer.elapsedMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
        expect(answer.elapsedMs).toBeLessThan(BODY_TIMEOUT_MS + MACHINE_ALLOWANCE_MS);
      });

      it('answers 408 JSON and closes the connection when the body stalls after 10 bytes', async () => {
        const answer = await rawExchange(port, { pieces: [`${head('application/x-www-form-urlencoded', 100_000)}name=Ada&x`] });
        expect408(answer);
        expect(answer.elapsedMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
        expect(answer.elapsedMs).toBeLessThan(BODY_TIMEOUT_MS + MACHINE_ALLOWANCE_MS);
      });

      it('still parses a body that arrives in time, in pieces', async () => {
        const body = '{"name":"Ada"}';
        const answer = await rawExchange(port, {
          pieces: [head('application/json', body.length), body.slice(0, 5), body.slice(5), ''],
          pauseMs: 10,
          waitMs: BODY_TIMEOUT_MS + MACHINE_ALLOWANCE_MS,
        });
        expect(answer.status).toBe(201);
        expect(JSON.parse(answer.body)).toEqual({ body: { name: 'Ada' } });
      });
    });
  }

  it('defaults to 10 s and refuses a wrong bodyTimeoutMs at start-up', () => {
    expect(DEFAULT_BODY_TIMEOUT_MS).toBe(10_000);
    expect(() => parseBodies({ bodyTimeoutMs: 0 })).toThrow(ConfigurationError);
    expect(() => parseBodies({ bodyTimeoutMs: 1.5 })).toThrow(/bodyTimeoutMs/);
  });
});

describe('serverTimeouts()', () => {
  it("sets Node's headersTimeout and requestTimeout to the documented defaults", () => {
    const server = serverTimeouts(createServer());
    expect(SERVER_TIMEOUTS).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(30_000);
  });

  it('takes other values, and refuses headers allowed longer than the whole request', () => {
    const server = serverTimeouts(createServer(), { headersTimeoutMs: 2000, requestTimeoutMs: 5000 });
    expect([server.headersTimeout, server.requestTimeout]).toEqual([2000, 5000]);
    expect(() => serverTimeouts(createServer(), { headersTimeoutMs: 6000, requestTimeoutMs: 5000 })).toThrow(/headersTimeoutMs/);
    expect(() => serverTimeouts(createServer(), { requestTimeout: 5000 } as never)).toThrow(ConfigurationError);
  });

  it('cuts a client that trickles its headers (Node answers 408 once the deadline has passed)', async () => {
    const CHECK_MS = 100;
    const HEADERS_TIMEOUT_MS = 500;
    const server = serverTimeouts(createServer({ connectionsCheckingInterval: CHECK_MS }, echo(true)), {
      headersTimeoutMs: HEADERS_TIMEOUT_MS,
      requestTimeoutMs: 1000,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const pieces = ['POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\n', ...Array.from({ length: 30 }, () => 'X')];
      const answer = await rawExchange(port, { pieces, pauseMs: 100, waitMs: 4000 });
      expect(answer.status).toBe(408);
      expect(answer.closed).toBe(true);
      expect(answer.elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + CHECK_MS + MACHINE_ALLOWANCE_MS);
    } finally {
      await closeServer(server);
    }
  });
});

describe('parseBodies() charsets (RFC 8259 §8.1: JSON between systems is UTF-8)', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    ({ server, port } = await serve(echo(true)));
  });
  afterAll(() => closeServer(server));

  const post = (type: string, body: Buffer) =>
    rawExchange(port, {
      pieces: [
        Buffer.concat([
          Buffer.from(
            `POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`,
          ),
          body,
        ]),
      ],
    });
  // A lone high surrogate, as UTF-16LE code units: what the UTF-8 check refuses as a \uD800 escape.
  const loneSurrogate = Buffer.concat([
    Buffer.from('{"name":"', 'utf16le'),
    Buffer.from([0x00, 0xd8]),
    Buffer.from('"}', 'utf16le'),
  ]);

  it.each([
    ['application/json; charset=utf-16le', loneSurrogate],
    ['application/json; charset=utf-16le', Buffer.from('{"name":"Ada"}', 'utf16le')],
    ['application/json; charset=utf-16be', Buffer.from('{"name":"Ada"}', 'utf16le').swap16()],
    ['application/json; charset=utf-32', Buffer.from('\0\0\0{\0\0\0}')],
    ['application/x-www-form-urlencoded; charset=iso-8859-1', Buffer.from('name=Ad%E9')],
  ])('refuses %s with 415 unsupportedCharset', async (type, body) => {
    const answer = await post(type, body);
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body)).toEqual({ errors: [{ message: 'The request body charset is not supported.', code: 41501 }] });
  });

  it('refuses a UTF-16 body with a byte-order mark and no charset as not UTF-8 (400)', async () => {
    const answer = await post(
      'application/json',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"name":"Ada"}', 'utf16le')]),
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).errors[0].code).toBe(40012);
  });

  it('accepts UTF-8, with or without its charset parameter', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8']) {
      const answer = await post(type, Buffer.from('{"name":"Adé"}'));
      expect(answer.status).toBe(201);
      expect(JSON.parse(answer.body)).toEqual({ body: { name: 'Adé' } });
    }
  });
});
