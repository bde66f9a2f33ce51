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

// Patterns of header values (RFC 9110 §5.6.2 tokens, RFC 9651 lists, HTTP-dates): a header is never free text.
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const TOKEN_LIST = `^${TOKEN}(, *${TOKEN})*$`;
const VISIBLE = '^[\\x20-\\x7E]+$';
const HTTP_DATE = '[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT';
const DIRECTIVES = `^${TOKEN}(=[0-9]+)?(, *${TOKEN}(=[0-9]+)?)*$`;
const SF_ITEMS = '"[^"]*"(;[a-z]+=[^,;]+)*';
const header = (maxLength: number, pattern: string): Json => ({ type: 'string', maxLength, pattern });

/** Every header the preset may send, with what it says. */
export function headerSpecs(plan: Plan): ReadonlyMap<string, HeaderSpec> {
  const specs = new Map<string, HeaderSpec>();
  const set = (name: string, description: string, schema: Json) => specs.set(name, { description, schema });
  for (const [name, value] of plan.securityHeaders) {
    set(name, 'Security response header of the conventions.', value ? fixed(value) : header(HEADER_MAX, VISIBLE));
  }
  set('Cache-Control', 'Caching of this answer; `no-store, max-age=0` unless the route states its own.', header(256, DIRECTIVES));
  set(
    'RateLimit-Policy',
    'The quota policies (draft-ietf-httpapi-ratelimit-headers): name, `q`, `w`, `pk`.',
    header(1024, `^${SF_ITEMS}(, *${SF_ITEMS})*$`),
  );
  set('RateLimit', 'What is left of each quota: name, `r`, `t`, `pk`.', header(1024, `^${SF_ITEMS}(, *${SF_ITEMS})*$`));
  set(
    'Retry-After',
    'When to try again: seconds (429), or seconds or an HTTP-date (503, 202).',
    header(29, `^([0-9]+|${HTTP_DATE})$`),
  );
  set('ETag', 'Entity tag of the representation (RFC 9110 §8.8.3).', header(256, '^(W/)?"[\\x21\\x23-\\x7E]*"$'));
  set('Last-Modified', 'Time of the last change, HTTP-date.', header(29, `^${HTTP_DATE}$`));
  set(
    'Access-Control-Allow-Origin',
    'The validated origin of a cross-origin request.',
    header(2048, '^(\\*|null|https?://[\\x21-\\x7E]+)$'),
  );
  set('Access-Control-Allow-Credentials', 'Cookies and `Authorization` may be used.', fixed('true'));
  set('Access-Control-Expose-Headers', 'Headers a browser script may read.', header(1024, TOKEN_LIST));
  set('Vary', 'Request headers that select the answer (`Origin` when CORS is on).', header(1024, TOKEN_LIST));
  set(
    'WWW-Authenticate',
    'The authentication challenge (RFC 9110 §11.6.1, RFC 6750 §3).',
    header(1024, `^${TOKEN}( [\\x20-\\x7E]+)?$`),
  );
  set('Allow', 'The methods the path answers (RFC 9110 §10.2.1).', header(256, TOKEN_LIST));
  set(
    'Link',
    'The next page (`rel="next"`), when more results follow and the address is not too long.',
    header(2048, '^<[^>]+>;[\\x20-\\x7E]+$'),
  );
  set('Pragma', '`no-cache` on a token failure (RFC 6749 §5.1).', fixed('no-cache'));
  set(
    'Request-Id',
    "The request's id, on an answer a security event was published for (docs/observability.md): the id the event carries.",
    header(128, '^[\\x21-\\x7E]+$'),
  );
  return specs;
}

/** A `$ref` to the header component `name`, added on first use. */
export function headerRef(doc: Json, plan: Plan, name: string): { $ref: string } {
  const spec = headerSpecs(plan).get(name) as HeaderSpec;
  return addComponent(doc, 'headers', name, { description: spec.description, schema: spec.schema });
}

/** The headers of every answer: security headers, `Cache-Control`, the rate limit, CORS, the request's id. */
export function everyAnswerHeaders(plan: Plan): string[] {
  const names = plan.securityHeaders.map(([name]) => name);
  // Any answer may name its request once a security event was published for it (a refusal, a token issued).
  names.push('Request-Id');
  if (plan.cacheControl !== undefined) names.push('Cache-Control');
  if (plan.rateLimit) names.push('RateLimit-Policy', 'RateLimit');
  if (plan.cors)
    names.push('Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials', 'Access-Control-Expose-Headers', 'Vary');
  return names;
}
