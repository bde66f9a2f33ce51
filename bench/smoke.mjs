// Starts every bench server once and asks each route once, without load:
// prints, as JSON, what each target answered. test/meta/bench.test.ts runs it to
// prove the servers start and answer the same bytes.
import { bearerTokenForBench, EXPECTED_BODY, probe, startAll, stopAll, TARGETS } from './http.mjs';

const servers = await startAll();
try {
  const withToken = await probe(servers, bearerTokenForBench());
  const withoutToken = await probe(servers, 'not-a-token');
  const report = TARGETS.map((target) => ({
    id: target.id,
    status: withToken[target.id].status,
    sameBody: withToken[target.id].body === EXPECTED_BODY,
    statusWithBadToken: withoutToken[target.id].status,
    contentSecurityPolicy: withToken[target.id].headers['content-security-policy'] ?? null,
  }));
  process.stdout.write(`${JSON.stringify({ expectedBody: EXPECTED_BODY, targets: report })}\n`);
} finally {
  await stopAll(servers);
}
