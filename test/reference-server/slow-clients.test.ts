import { rawExchange } from '../support/raw-http.js';
import { MACHINE_ALLOWANCE_MS } from '../support/timing.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * Slow and half-open clients on the reference server: a body trickled at
 * 10 bytes/s and a body stalled after 10 bytes are both answered 408 JSON
 * and closed at parseBodies()' default deadline (10 s), where only Node's
 * 300 s applied.
 */
const DEADLINE_MS = 10_000;

describe('slow request bodies on the reference server', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({});
  });
  afterAll(() => server?.stop());

  const head = `POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;

  it('answers both 408 JSON with Connection: close, and closes them within the 10 s deadline', async () => {
    // Both at once: one deadline's wait for the two. 1 byte every 100 ms, bounded to 150 (15 s).
    const [trickled, stalled] = await Promise.all([
      rawExchange(server.port, {
        pieces: [head, ...Array.from({ length: 150 }, () => 'a')],
        pauseMs: 100,
        waitMs: DEADLINE_MS + MACHINE_ALLOWANCE_MS + 1000,
      }),
      rawExchange(server.port, { pieces: [`${head}{"name":"A`], waitMs: DEADLINE_MS + MACHINE_ALLOWANCE_MS + 1000 }),
    ]);
    for (const answer of [trickled, stalled]) {
      expect(answer.status).toBe(408);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body).errors[0]).toEqual(expect.objectContaining({ code: 40800 }));
      expect(answer.closed).toBe(true);
      // Not before the deadline (the pieces reach the server after the clock started), and at it.
      expect(answer.elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 500);
      expect(answer.elapsedMs).toBeLessThan(DEADLINE_MS + MACHINE_ALLOWANCE_MS);
    }
  }, 30_000);
});
