import { REFLECTED_INPUT_LIMITS } from '../errors/reflected-input.js';
import { addComponent, type Json } from './document.js';
import type { Plan } from './plan.js';

/**
 * The components withConventions() adds: the one error body, the token
 * endpoint's error body, the headers the preset sends and the error
 * answers. Every string and array is bounded (OWASP API4), and the schemas
 * read the same in OpenAPI 3.0 and 3.1 (no `const`, no `null` types).
 */

/** Longest header value a declared header may carry (Node's default limit for a whole head is 16 KB). */
const HEADER_MAX = 4096;
const text = (maxLength: number, description?: string): Json => ({
  type: 'string',
  maxLength,
  ...(description ? { description } : {}),
});
const fixed = (value: string): Json => ({ type: 'string', enum: [value], maxLength: value.length });

/** The conventions' Errors rule 7: `{ "errors": [{ "message", "code" }] }`, as errorHandler() writes it. */
export function errorsSchema(doc: Json): { $ref: string } {
  return addComponent(doc, 'schemas', 'Errors', {
    type: 'object',
    description: 'The one error body of the conventions (docs/errors.md lists every code).',
    required: ['errors'],
    properties: {
      errors: {
        type: 'array',
        minItems: 1,
        // The items kept, and the one that sums up the rest (src/errors/reflected-input.ts).
        maxItems: REFLECTED_INPUT_LIMITS.items + 1,
        items: {
          type: 'object',
          required: ['message', 'code'],
          properties: {
            message: text(REFLECTED_INPUT_LIMITS.message),
            code: { type: 'integer', format: 'int32', minimum: 10000, maximum: 59999 },
            field: text(REFLECTED_INPUT_LIMITS.message),
            detail: {
              description: 'What exactly was refused, when the code has more to say (bounded: src/errors/reflected-input.ts).',
            },
          },
        },
      },
    },
  });
}

/** RFC 6749 §5.2 and RFC 6750 §3: the token endpoint's and a bearer failure's `{ "error", "error_description" }`. */
export function tokenErrorSchema(doc: Json): { $ref: string } {
  return addComponent(doc, 'schemas', 'TokenError', {
    type: 'object',
    required: ['error'],
    properties: {
      error: { type: 'string', maxLength: 64, pattern: '^[\\x20-\\x21\\x23-\\x5B\\x5D-\\x7E]+$' },
      error_description: text(REFLECTED_INPUT_LIMITS.message),
    },
  });
}

interface HeaderSpec {
  readonly description: string;
  readonly schema: Json;
}

/** Every header the preset may send, with what it says. */
export function headerSpecs(plan: Plan): ReadonlyMap<string, HeaderSpec> {
  const specs = new Map<string, HeaderSpec>();
  for (const [name, value] of plan.securityHeaders) {
    specs.set(name, {
      description: 'Security response header of the conventions.',
      schema: value ? fixed(value) : text(HEADER_MAX),
    });
  }
  specs.set('Cache-Control', {
    description: 'Caching of this answer; `no-store, max-age=0` unless the route states its own.',
    schema: text(256),
  });
  specs.set('RateLimit-Policy', {
    description: 'The quota policies (draft-ietf-httpapi-ratelimit-headers): name, `q`, `w`, `pk`.',
    schema: text(1024),
  });
  specs.set('RateLimit', { description: 'What is left of each quota: name, `r`, `t`, `pk`.', schema: text(1024) });
  specs.set('Retry-After', {
    description: 'When to try again: seconds (429), or seconds or an HTTP-date (503, 202).',
    schema: text(64),
  });
  specs.set('ETag', { description: 'Entity tag of the representation (RFC 9110 §8.8.3).', schema: text(256) });
  specs.set('Last-Modified', { description: 'Time of the last change, HTTP-date.', schema: text(64) });
  specs.set('Access-Control-Allow-Origin', {
    description: 'The validated origin of a cross-origin request.',
    schema: text(2048),
  });
  specs.set('Access-Control-Allow-Credentials', {
    description: 'Cookies and `Authorization` may be used.',
    schema: fixed('true'),
  });
  specs.set('Access-Control-Expose-Headers', { description: 'Headers a browser script may read.', schema: text(1024) });
  specs.set('Vary', { description: 'Request headers that select the answer (`Origin` when CORS is on).', schema: text(1024) });
  specs.set('WWW-Authenticate', {
    description: 'The authentication challenge (RFC 9110 §11.6.1, RFC 6750 §3).',
    schema: text(1024),
  });
  specs.set('Allow', { description: 'The methods the path answers (RFC 9110 §10.2.1).', schema: text(256) });
  specs.set('Link', {
    description: 'The next page (`rel="next"`), when more results follow and the address is not too long.',
    schema: text(2048),
  });
  specs.set('Pragma', { description: '`no-cache` on a token failure (RFC 6749 §5.1).', schema: fixed('no-cache') });
  return specs;
}

/** A `$ref` to the header component `name`, added on first use. */
export function headerRef(doc: Json, plan: Plan, name: string): { $ref: string } {
  const spec = headerSpecs(plan).get(name) as HeaderSpec;
  return addComponent(doc, 'headers', name, { description: spec.description, schema: spec.schema });
}

/** The headers of every answer: security headers, `Cache-Control`, the rate limit, CORS. */
export function everyAnswerHeaders(plan: Plan): string[] {
  const names = plan.securityHeaders.map(([name]) => name);
  if (plan.cacheControl !== undefined) names.push('Cache-Control');
  if (plan.rateLimit) names.push('RateLimit-Policy', 'RateLimit');
  if (plan.cors)
    names.push('Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials', 'Access-Control-Expose-Headers', 'Vary');
  return names;
}
