import type { ConventionsOptions } from '../src/index.js';
// The authorization server registers its document part as it loads: `tokenRouter` as data is described by it.
import 'express-api-conventions-authorization-server';
import { withConventions } from '../src/openapi/index.js';
import { type SeededRandom, seededRandom } from './support/seeded-random.js';

/**
 * withConventions() over generated documents: it adds and never takes away
 * (every key path of the input is in the output with the same leaf value),
 * it leaves its input as it was, and applying it twice is applying it once.
 */

type Json = Record<string, unknown>;

const STATUSES = ['200', '201', '204', '400', '401', '404', '429', '500', '503', 'default', '4XX'];
const HEADERS = ['RateLimit', 'ratelimit', 'ETag', 'X-Request-Id', 'Cache-Control', 'Retry-After', 'Access-Control-Allow-Origin'];

function response(random: SeededRandom): Json {
  const made: Json = { description: random.word('abc ', 1, 12) };
  if (random.chance(0.5)) {
    made.headers = Object.fromEntries(
      Array.from({ length: random.int(1, 3) }, () => [
        random.pick(HEADERS),
        { schema: { type: 'string', maxLength: random.int(1, 99) } },
      ]),
    );
  }
  if (random.chance(0.6)) {
    const paged = random.chance(0.4);
    const properties: Json = { items: { type: 'array', items: { type: 'string' } } };
    if (paged) properties.hasNext = { type: 'boolean' };
    made.content = { 'application/json': { schema: { type: 'object', properties } } };
  }
  return made;
}

function operation(random: SeededRandom): Json {
  const made: Json = {
    responses: Object.fromEntries(Array.from({ length: random.int(1, 4) }, () => [random.pick(STATUSES), response(random)])),
  };
  if (random.chance(0.3)) made.security = random.pick([[], [{}], [{ bearerAuth: [] }], [{}, { bearerAuth: ['read'] }]]);
  if (random.chance(0.4)) made.requestBody = { content: { 'application/json': { schema: { type: 'object' } } } };
  if (random.chance(0.3))
    made.parameters = [{ name: random.pick(['limit', 'offset', 'q', 'fields']), in: 'query', schema: { type: 'string' } }];
  return made;
}

function document(random: SeededRandom): Json {
  const paths: Json = {};
  for (let index = random.int(1, 5); index > 0; index--) {
    const item: Json = {};
    for (const method of ['get', 'post', 'put', 'patch', 'delete', 'head'])
      if (random.chance(0.4)) item[method] = operation(random);
    paths[`/v1/${random.word('abcdef', 1, 6)}${random.chance(0.5) ? '/{id}' : ''}`] = item;
  }
  const doc: Json = { openapi: random.pick(['3.0.3', '3.1.0']), info: { title: 't', version: '1' }, paths };
  if (random.chance(0.5)) {
    doc.components = {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          ...(random.chance(0.5) ? { description: 'Ours.' } : {}),
        },
      },
      ...(random.chance(0.5) ? { schemas: { Errors: { type: 'object', description: 'The team’s own.' } } } : {}),
      ...(random.chance(0.5) ? { headers: { RateLimit: { schema: { type: 'string' }, description: 'The team’s own.' } } } : {}),
    };
  }
  if (random.chance(0.3)) doc.security = [{ bearerAuth: [] }];
  return doc;
}

function options(random: SeededRandom): ConventionsOptions {
  const made: Json = {};
  if (random.chance(0.3)) made.rateLimit = false;
  if (random.chance(0.5)) made.corsPolicy = { origins: ['https://app.example'] };
  if (random.chance(0.3)) made.securityHeaders = { contentSecurityPolicy: false };
  if (random.chance(0.3)) made.caching = { etag: false };
  if (random.chance(0.4)) made.tokenRouter = { issuer: 'https://id.example', dpop: random.chance(0.5) };
  return made as ConventionsOptions;
}

/** Every leaf of a JSON value, as `[key path, value]`; an escaped `description` counts as its text. */
function leaves(value: unknown, at: string[] = []): [string, unknown][] {
  if (Array.isArray(value))
    return value.length === 0
      ? [[at.join('\u0000'), '[]']]
      : value.flatMap((entry, index) => leaves(entry, [...at, String(index)]));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    return entries.length === 0 ? [[at.join('\u0000'), '{}']] : entries.flatMap(([key, entry]) => leaves(entry, [...at, key]));
  }
  return [[at.join('\u0000'), value]];
}

const at = (value: unknown, path: string): unknown =>
  path === '' ? value : path.split('\u0000').reduce<unknown>((current, key) => (current as Json | undefined)?.[key], value);

describe('withConventions() over generated documents', () => {
  const SEEDS = Array.from({ length: 200 }, (_, index) => index + 1);

  it.each(SEEDS)('seed %i: keeps every key and value of the input (a description only grows)', (seed) => {
    const random = seededRandom(seed);
    const input = document(random);
    const output = withConventions(input, options(random));
    for (const [path, value] of leaves(input)) {
      const kept = at(output, path);
      if (value === '[]' || value === '{}') expect(kept).toBeDefined();
      else if (path.endsWith('\u0000description')) expect(String(kept).startsWith(String(value))).toBe(true);
      else expect([path, kept]).toEqual([path, value]);
    }
  });

  it.each(SEEDS)('seed %i: leaves its input as it was, gives the same output twice, and applying it twice is once', (seed) => {
    const random = seededRandom(seed);
    const input = document(random);
    const given = options(random);
    const before = JSON.stringify(input);
    const once = withConventions(input, given);
    expect(JSON.stringify(input)).toBe(before);
    expect(JSON.stringify(withConventions(input, given))).toBe(JSON.stringify(once));
    expect(JSON.stringify(withConventions(once, given))).toBe(JSON.stringify(once));
  });
});
