import { errorsSchema, everyAnswerHeaders, headerRef, tokenErrorSchema } from './components.js';
import { addComponent, child, hasHeader, isObject, type Json, resolve } from './document.js';
import type { Plan } from './plan.js';

/** An error answer of the preset: its status, its component name and what it means. */
export interface ErrorAnswer {
  readonly status: string;
  readonly name: string;
  readonly description: string;
  /** Headers of this status besides those of every answer. */
  readonly headers: readonly string[];
}

/** The conventions' status codes the preset answers by itself (docs/conventions.md rules 6.1 and 14.3). */
export const ERROR_ANSWERS: readonly ErrorAnswer[] = [
  { status: '400', name: 'BadRequest', description: 'The request is not valid (syntax, parameters, body).', headers: [] },
  {
    status: '401',
    name: 'Unauthorized',
    description: 'Authentication failed or is missing.',
    headers: ['WWW-Authenticate', 'Pragma'],
  },
  {
    status: '403',
    name: 'Forbidden',
    description: 'Not allowed: scope, CSRF token, cross-site request.',
    headers: ['WWW-Authenticate'],
  },
  {
    status: '404',
    name: 'NotFound',
    description: 'No such resource, or no endpoint at this URI (the code tells which).',
    headers: [],
  },
  { status: '405', name: 'MethodNotAllowed', description: 'The path does not answer this method.', headers: ['Allow'] },
  { status: '408', name: 'RequestTimeout', description: 'The request body took too long to arrive.', headers: [] },
  { status: '412', name: 'PreconditionFailed', description: 'The resource changed since it was read (`If-Match`).', headers: [] },
  { status: '413', name: 'PayloadTooLarge', description: 'The request body is too large.', headers: [] },
  {
    status: '415',
    name: 'UnsupportedMediaType',
    description: 'The body media type, charset or encoding is not accepted.',
    headers: [],
  },
  { status: '429', name: 'TooManyRequests', description: 'A rate limit was exceeded.', headers: ['Retry-After'] },
  { status: '500', name: 'InternalServerError', description: 'An internal error occurred.', headers: [] },
  {
    status: '503',
    name: 'ServiceUnavailable',
    description: 'Maintenance, or a state store out of reach.',
    headers: ['Retry-After'],
  },
];

/** Adds, by `$ref`, the headers `names` to a response that does not declare them yet. */
export function declareHeaders(doc: Json, plan: Plan, response: Json, names: readonly string[]): void {
  if (names.length === 0) return;
  const headers = child(response, 'headers');
  for (const name of names) if (!hasHeader(headers, name)) headers[name] = headerRef(doc, plan, name);
}

/**
 * The error answer component for a status, in the one error shape, or in
 * RFC 6749's on the token service's paths (tokenEndpointErrors()). A 401
 * from bearerAuth() is RFC 6750's `invalid_token`: both shapes are allowed.
 */
export function errorAnswer(doc: Json, plan: Plan, answer: ErrorAnswer, tokenShape: boolean): { $ref: string } {
  const errors = errorsSchema(doc);
  const schema =
    tokenShape || answer.status !== '401'
      ? tokenShape
        ? tokenErrorSchema(doc)
        : errors
      : { oneOf: [errors, tokenErrorSchema(doc)] };
  const response: Json = {
    description: answer.description,
    headers: {},
    content: { 'application/json': { schema } },
  };
  const extra = tokenShape ? [...answer.headers, 'Pragma'] : answer.headers;
  declareHeaders(doc, plan, response, [...everyAnswerHeaders(plan), ...extra]);
  return addComponent(doc, 'responses', tokenShape ? `Token${answer.name}` : answer.name, response);
}

/** The response objects an operation lists (local `$ref`s followed), each once. */
export function responsesOf(doc: Json, operation: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  const responses = resolve(doc, operation.responses);
  if (!responses) return found;
  for (const [status, raw] of Object.entries(responses)) {
    const response = resolve(doc, raw);
    if (response && isObject(response)) found.set(status, response);
  }
  return found;
}
