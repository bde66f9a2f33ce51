import request from 'supertest';
import { waitUntil } from '../support/timing.js';
import { DEMO } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The reference server writes every security event as one JSON line on
 * standard error, through pino, unless LOG_EVENTS=0 (the contract's
 * "Settings"; docs/observability.md).
 */

/** What the process writes on standard error from now on. */
function standardError(server: RunningProcess): () => string {
  let seen = '';
  server.child.stderr?.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
  });
  return () => seen;
}

/** The complete lines of standard error that are JSON objects. */
const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

// A write from another site, and a request with a token the server never issued.
async function refusals(url: string): Promise<void> {
  const crossSite = await request(url)
    .post('/v1/sessions')
    .set('Sec-Fetch-Site', 'cross-site')
    .set('Origin', 'https://evil.example')
    .type('form')
    .send({ username: DEMO.username, password: DEMO.password });
  expect(crossSite.status).toBe(403);
  const badToken = await request(url).get('/v1/me').set('Authorization', 'Bearer not-a-token');
  expect(badToken.status).toBe(401);
}

describe('LOG_EVENTS unset: every security event is a JSON line on standard error', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer();
  }, 60_000);
  afterAll(() => server.stop());

  it('writes the cross-site write and the bad token, each as the event itself and its instance; the library\u2019s warning as a JSON line too', async () => {
    const stderr = standardError(server);
    await refusals(server.url);
    const events = () => jsonLines(stderr()).filter((line) => 'event' in line);
    await waitUntil(() => events().length >= 2, 'two events on standard error');
    const [crossSite, badToken] = events();
    expect(crossSite).toMatchObject({
      event: 'malicious_cross_site',
      level: 'WARN',
      outcome: 'failure',
      status: 403,
      method: 'POST',
      route: '/v1/sessions',
      origin: 'https://evil.example',
      requestId: expect.any(String),
      description: expect.stringMatching(/\S/),
      datetime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // The instance that logged it: two instances over one Redis are told apart.
      instance: expect.stringMatching(/\S/),
      pid: server.child.pid,
    });
    expect(badToken).toMatchObject({ event: 'authn_token_invalid', level: 'WARN', outcome: 'failure', status: 401 });
    // Nothing of pino's own beyond the instance (no hostname key, numeric level, msg).
    expect(crossSite).not.toHaveProperty('hostname');
    expect(crossSite).not.toHaveProperty('msg');
    // The development warning of the refused cross-site write is a line of the same logger, not Node's text.
    expect(jsonLines(stderr())).toContainEqual(
      expect.objectContaining({ level: 'WARN', warning: 'EAC_CROSS_SITE_REFUSED', pid: server.child.pid }),
    );
    // One stream, one format: every complete line is JSON.
    const complete = stderr()
      .slice(0, stderr().lastIndexOf('\n') + 1)
      .split('\n')
      .filter((line) => line !== '');
    expect(complete.filter((line) => !line.startsWith('{'))).toEqual([]);
    // Nothing of the password the refused write carried.
    expect(stderr()).not.toContain(DEMO.password);
  });
});

describe('LOG_EVENTS=0: no event is written', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ LOG_EVENTS: '0' });
  }, 60_000);
  afterAll(() => server.stop());

  it('writes no JSON line for the same refusals', async () => {
    const stderr = standardError(server);
    await refusals(server.url);
    // Everything the process wrote is read once it has ended and its standard error is closed.
    await server.stop();
    await waitUntil(() => server.child.stderr?.closed === true, 'standard error closed');
    expect(jsonLines(stderr())).toEqual([]);
  });
});
