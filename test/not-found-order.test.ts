import express from 'express';
import express4 from 'express4';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';

/**
 * A 405 whose `Allow` names the request's own method cannot be a wrong
 * method: notFound() ran before the route that answers it (mounted before
 * the routes, or before a framework registers its own). Outside
 * production, notFound() says so once (EAC_NOT_FOUND_BEFORE_ROUTES).
 */

const CODE = 'EAC_NOT_FOUND_BEFORE_ROUTES';

/** Runs `scenario` and returns the EAC_NOT_FOUND_BEFORE_ROUTES warnings it raised. */
async function orderWarnings(scenario: () => Promise<void>): Promise<string[]> {
  const spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  try {
    await scenario();
    return spy.mock.calls
      .filter(([, options]) => (options as { code?: string } | undefined)?.code === CODE)
      .map(([message]) => String(message));
  } finally {
    spy.mockRestore();
  }
}

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as typeof express],
])('notFound() mounted before the routes, on %s', (_name, makeApp) => {
  it('answers 405 with an Allow that names the method, and warns once that notFound() stands before the routes', async () => {
    const app = makeApp();
    app.use(notFound(), errorHandler({ log: false }));
    app.get('/v1/users', (_req, res) => {
      res.json({ data: [] });
    });
    let statuses: number[] = [];
    const warnings = await orderWarnings(async () => {
      const first = await request(app).get('/v1/users');
      const second = await request(app).get('/v1/users');
      statuses = [first.status, second.status];
      expect(first.headers.allow).toBe('GET, HEAD');
    });
    expect(statuses).toEqual([405, 405]);
    expect(warnings).toEqual([
      'notFound() answered GET /v1/users with 405 although a route answers GET there (Allow: GET, HEAD): ' +
        'notFound() runs before the routes. Mount it after every route, with errorHandler() ' +
        '(docs/configuration-errors.md#eac_not_found_before_routes).',
    ]);
  });

  it('says nothing for a real 405, notFound() after the routes', async () => {
    const app = makeApp();
    app.get('/v1/users', (_req, res) => {
      res.json({ data: [] });
    });
    app.use(notFound(), errorHandler({ log: false }));
    const warnings = await orderWarnings(async () => {
      const res = await request(app).delete('/v1/users');
      expect(res.status).toBe(405);
    });
    expect(warnings).toEqual([]);
  });
});
