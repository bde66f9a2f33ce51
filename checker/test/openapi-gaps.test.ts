import express, { type Express } from 'express';
import { conventions, errorHandler, notFound } from 'express-api-conventions';
import { withConventions } from 'express-api-conventions/openapi';
import { checkConventions } from '../src/index.js';

/**
 * `--openapi`, read back: a service whose document lacks what the preset
 * sends (a header the answer carried, a status it answered) is reported,
 * and the same document through withConventions() is not.
 */

// A small quota, so that the run meets a 429 the team's document does not list.
const OPTIONS = { rateLimit: { limit: 8 } };

function app(): Express {
  const made = express();
  made.use(conventions(OPTIONS));
  made.get('/v1/things', (_req, res) => {
    res.json({ things: [{ name: 'one' }], hasNext: false });
  });
  made.use(notFound(), errorHandler({ log: false }));
  return made;
}

const TEAM_DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Things', version: '1.0.0' },
  paths: {
    '/v1/things': {
      get: {
        responses: {
          '200': {
            description: 'The things.',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { things: { type: 'array' }, hasNext: { type: 'boolean' } } },
              },
            },
          },
        },
      },
    },
  },
};

const GAP_CHECKS = ['common.openapi-statuses', 'common.openapi-headers'];

describe('checkConventions() with an OpenAPI document', () => {
  it('reports the headers and statuses the document does not declare for the operation', async () => {
    const report = await checkConventions(app(), { openapi: TEAM_DOCUMENT, maxRequests: 60 });
    const gaps = report.results.filter((result) => GAP_CHECKS.includes(result.id));
    expect(gaps.map((result) => [result.id, result.status])).toEqual([
      ['common.openapi-statuses', 'fail'],
      ['common.openapi-headers', 'fail'],
    ]);
    const headers = gaps.find((result) => result.id === 'common.openapi-headers');
    expect(headers?.evidence?.request).toMatch(/^(GET|HEAD) \/v1\/things/);
    expect(headers?.evidence?.seen).toContain('ratelimit');
    expect(headers?.evidence?.seen).toContain('strict-transport-security');
    expect(gaps.find((result) => result.id === 'common.openapi-statuses')?.evidence?.seen).toMatch(/status 429 not listed/);
  });

  it('finds no gap in the document withConventions() gives', async () => {
    const report = await checkConventions(app(), { openapi: withConventions(TEAM_DOCUMENT, OPTIONS), maxRequests: 60 });
    const gaps = report.results.filter((result) => GAP_CHECKS.includes(result.id));
    expect(gaps.map((result) => [result.id, result.status])).toEqual([
      ['common.openapi-statuses', 'pass'],
      ['common.openapi-headers', 'pass'],
    ]);
  });

  it('skips both checks without a document', async () => {
    const report = await checkConventions(app(), { paths: ['/v1/things'], maxRequests: 20 });
    const gaps = report.results.filter((result) => GAP_CHECKS.includes(result.id));
    expect(gaps.map((result) => [result.id, result.status, result.reason])).toEqual([
      ['common.openapi-statuses', 'skip', 'needs --openapi (the service’s OpenAPI document)'],
      ['common.openapi-headers', 'skip', 'needs --openapi (the service’s OpenAPI document)'],
    ]);
  });
});
