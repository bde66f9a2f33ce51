import express, { type Express, type RequestHandler } from 'express';
import type { Response } from 'supertest';

/**
 * A minimal app: the given middlewares, then the given routes. The test
 * helper of every module file (one helper, as helmet's tests have).
 */
export function appWith(middlewares: RequestHandler | RequestHandler[], routes?: (app: Express) => void): Express {
  const app = express();
  app.use(middlewares);
  routes?.(app);
  return app;
}

/**
 * Asserts a map of headers on a response: a string must match exactly,
 * `null` means the header must be absent.
 */
export function expectHeaders(res: Response, expected: Readonly<Record<string, string | null>>): void {
  const seen: Record<string, string | null> = {};
  const want: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(expected)) {
    const actual = res.headers[name.toLowerCase()];
    seen[name] = actual === undefined ? null : Array.isArray(actual) ? actual.join(', ') : String(actual);
    want[name] = value;
  }
  expect(seen).toEqual(want);
}

/** An HTTP-date (RFC 9110 §5.6.7), as Node writes `Date`. */
export const HTTP_DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
