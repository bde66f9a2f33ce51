import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { rawGet } from '../support/neighbours.js';
import { expectSpecHeaders } from '../support/spec-headers.js';

// @opentelemetry/instrumentation-http and -express patch modules as Node's
// loader requires them; jest's registry does not go through that loader, so
// the traced app runs in a child process (test/fixtures/neighbours/otel-app.cjs)
// on the built library (`npm run build`), with the instrumentations
// registered before Express and the library are required.

const LIBRARY_DIST = join(__dirname, '..', '..', 'dist', 'cjs', 'index.js');
const APP = join(__dirname, '..', 'fixtures', 'neighbours', 'otel-app.cjs');

interface SpanRecord {
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

function next<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the traced app sent no ${key} in 10 s`)), 10_000);
    const onMessage = (message: Record<string, unknown>) => {
      if (!(key in message)) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message[key] as T);
    };
    child.on('message', onMessage);
  });
}

describe.each([
  ['the preset in the app', 'app', ''],
  ['the preset in a sub-app', 'sub-app', '/api'],
])('@opentelemetry/instrumentation-http and -express, with %s', (_title, layout, base) => {
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    if (!existsSync(LIBRARY_DIST)) throw new Error(`${LIBRARY_DIST} is missing: run npm run build first`);
    child = fork(APP, [], {
      env: { ...process.env, LIBRARY_DIST, LAYOUT: layout },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    url = `http://127.0.0.1:${await next<number>(child, 'port')}${base}`;
  });
  afterAll(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send('stop');
    await exited;
  });

  it('answers with every header of the conventions, and its spans carry the status and the route', async () => {
    const ok = await rawGet(`${url}/v1/users/7`);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ id: 7 });
    expectSpecHeaders(ok.headers);
    const missing = await rawGet(`${url}/v1/nothing-here`);
    expect(missing.status).toBe(404);
    expectSpecHeaders(missing.headers);

    child.send('spans');
    const spans = await next<SpanRecord[]>(child, 'spans');
    const server = spans.filter((span) => span.kind === 1); // SpanKind.SERVER
    // The stable HTTP semantic conventions' name, or the older one.
    const status = (span: SpanRecord) => span.attributes['http.response.status_code'] ?? span.attributes['http.status_code'];
    expect(server.map(status)).toEqual([200, 404]);
    expect(server[0]?.attributes['http.route']).toBe(`${base}/v1/users/:id`);
    expect(spans.some((span) => span.attributes['express.type'] === 'request_handler')).toBe(true);
  });
});
