import { ConfigurationError } from '../config/configuration-error.js';
import { everyAnswerHeaders } from './components.js';
import { addComponent, child, isObject, isProtected, type Json, METHODS, resolve } from './document.js';
import { addDocumentPart, stateJwtPractices } from './jwt-practices.js';
import { type Plan, readPlan, type WithConventionsOptions } from './plan.js';
import { declareHeaders, ERROR_ANSWERS, type ErrorAnswer, errorAnswer, responsesOf } from './responses.js';

/**
 * withConventions(): a team's OpenAPI document, plus what conventions()
 * does on each operation with the same options. It adds; it never removes
 * or replaces what the document says, and the same input gives the same
 * output (so applying it twice is applying it once).
 */

const UNSAFE = new Set(['post', 'put', 'patch', 'delete']);
const CONDITIONAL_WRITES = new Set(['put', 'patch', 'delete']);
const ANSWERS_BY_STATUS = new Map(ERROR_ANSWERS.map((answer) => [answer.status, answer]));

/** The error statuses an operation may answer under the preset (docs/conventions.md rules 6.1 and 14.3). */
function errorStatuses(doc: Json, plan: Plan, method: string, operation: Json): string[] {
  const secured = isProtected(doc, operation);
  const hasBody = operation.requestBody !== undefined;
  const statuses = ['400'];
  if (secured || plan.bearer) statuses.push('401');
  if (secured || (UNSAFE.has(method) && plan.crossSite)) statuses.push('403');
  statuses.push('404', '405');
  if (hasBody) statuses.push('408');
  if (CONDITIONAL_WRITES.has(method)) statuses.push('412');
  if (hasBody) statuses.push('413', '415');
  if (plan.limitRefuses) statuses.push('429');
  statuses.push('500', '503');
  return statuses;
}

/** Whether a schema (through `$ref` and `allOf`) has the property `hasNext`: a list answer. */
function hasPagingFlag(doc: Json, value: unknown, depth = 0): boolean {
  const schema = resolve(doc, value);
  if (!schema || depth > 5) return false;
  if (isObject(schema.properties) && 'hasNext' in schema.properties) return true;
  return Array.isArray(schema.allOf) && schema.allOf.some((part) => hasPagingFlag(doc, part, depth + 1));
}

function isList(doc: Json, operation: Json): boolean {
  const ok = responsesOf(doc, operation).get('200');
  const content = resolve(doc, ok?.content) ?? {};
  return Object.entries(content).some(([type, media]) => /json/i.test(type) && hasPagingFlag(doc, resolve(doc, media)?.schema));
}

/** The common query parameters `offset`, `limit` and `fields` (docs/conventions.md section 5), as paging() and selectFields() read them. */
function addListParameters(doc: Json, plan: Plan, operation: Json): void {
  const parameters = Array.isArray(operation.parameters) ? operation.parameters : [];
  const named = (name: string) => parameters.some((p) => resolve(doc, p)?.in === 'query' && resolve(doc, p)?.name === name);
  const wanted: [string, Json][] = [
    [
      'offset',
      {
        name: 'offset',
        in: 'query',
        required: false,
        description: 'Start position of the result.',
        schema: { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
      },
    ],
    [
      'limit',
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'Number of items to return.',
        schema: { type: 'integer', format: 'int32', minimum: 0, maximum: plan.maxLimit, default: plan.defaultLimit },
      },
    ],
    [
      'fields',
      {
        name: 'fields',
        in: 'query',
        required: false,
        description: 'The fields to return, comma-separated (`a,b(c)`); all when omitted. An unknown field is refused with 400.',
        schema: { type: 'string', minLength: 1, maxLength: 1024 },
      },
    ],
  ];
  for (const [name, parameter] of wanted) {
    if (!named(name)) parameters.push(addComponent(doc, 'parameters', name, parameter));
  }
  if (parameters.length > 0) operation.parameters = parameters;
}

/** Headers of a response beyond those of every answer: validators on GET/HEAD 200, `Retry-After`, challenges and `Allow` where they apply. */
function ownHeaders(plan: Plan, method: string, status: string): string[] {
  const headers: string[] = [];
  if ((method === 'get' || method === 'head') && (status === '200' || status === '304')) headers.push('ETag', 'Last-Modified');
  if (status === '202' || status === '429' || status === '503') headers.push('Retry-After');
  // A bearer failure (RFC 6750 §3) challenges; a token failure also says `Pragma: no-cache` (the conventions' "Token failure").
  if (status === '401') headers.push('WWW-Authenticate', ...(plan.bearer || plan.tokenRouter ? ['Pragma'] : []));
  if (status === '403') headers.push('WWW-Authenticate');
  if (status === '405') headers.push('Allow');
  return plan.etag || !headers.includes('ETag') ? headers : headers.filter((name) => name !== 'ETag');
}

function addOperationConventions(doc: Json, plan: Plan, path: string, method: string, operation: Json): void {
  const tokenShape = plan.tokenRouter?.oauthErrorPaths.includes(path) === true;
  const responses = child(operation, 'responses');
  const list = method === 'get' && isList(doc, operation);
  if (list) addListParameters(doc, plan, operation);
  if ((method === 'get' || method === 'head') && '200' in responses && !('304' in responses)) {
    const notModified: Json = { description: 'Not modified: the representation the client holds is current (empty body).' };
    declareHeaders(doc, plan, notModified, [...everyAnswerHeaders(plan), 'ETag', 'Last-Modified']);
    responses['304'] = addComponent(doc, 'responses', 'NotModified', notModified);
  }
  for (const status of errorStatuses(doc, plan, method, operation)) {
    if (!(status in responses))
      responses[status] = errorAnswer(doc, plan, ANSWERS_BY_STATUS.get(status) as ErrorAnswer, tokenShape);
  }
  for (const [status, response] of responsesOf(doc, operation)) {
    const link = list && status === '200' ? ['Link'] : [];
    declareHeaders(doc, plan, response, [...everyAnswerHeaders(plan), ...ownHeaders(plan, method, status), ...link]);
  }
}

/** The document with what conventions(options) sends on each operation; the input is left as it was. */
export function withConventions<Document extends object>(document: Document, options?: WithConventionsOptions): Document {
  const given: unknown = document;
  if (!isObject(given) || typeof given.openapi !== 'string' || !/^3\.[01]\./.test(given.openapi)) {
    throw new ConfigurationError(
      'EAC_OPTION_INVALID',
      `withConventions(document): \`document\` must be an OpenAPI 3.0 or 3.1 document object (with \`openapi: 3.1.0\`); received ${isObject(given) ? `openapi ${JSON.stringify(given.openapi)}` : typeof given}.`,
    );
  }
  const plan = readPlan(options);
  const doc = structuredClone(given) as Json;
  if (plan.tokenRouter) addDocumentPart(doc, plan.tokenRouter);
  stateJwtPractices(doc);
  const paths = child(doc, 'paths');
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = resolve(doc, rawItem);
    if (!item) continue;
    for (const method of METHODS) {
      const operation = resolve(doc, item[method]);
      if (operation) addOperationConventions(doc, plan, path, method, operation);
    }
  }
  return doc as Document;
}
