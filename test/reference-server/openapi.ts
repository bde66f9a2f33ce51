import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { Response } from 'supertest';
import { parse } from 'yaml';

/**
 * Checks real responses of the reference server against docs/openapi.yaml:
 * the status is documented for the operation, and the JSON body (and each
 * documented header that has a schema) matches its schema. JSON Schema
 * 2020-12 is OpenAPI 3.1's dialect, so ajv's 2020 build reads it as written.
 */

interface Operation {
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> }>;
}

type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, Operation['responses'][string]> };
};

/** docs/openapi.yaml, parsed. */
export const DOCUMENT = parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.yaml'), 'utf8')) as Document;

/** The value a local `$ref` (`#/components/...`) points at, followed until it is not a reference. */
export function resolveRef<T = unknown>(value: unknown): T {
  let current = value;
  for (let depth = 0; depth < 10; depth++) {
    const ref = (current as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string') return current as T;
    if (!ref.startsWith('#/')) throw new Error(`only local references are read: ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], DOCUMENT);
    if (current === undefined) throw new Error(`unresolved ${ref}`);
  }
  throw new Error('reference chain too long');
}

/** Whether `value` matches the component schema `name` (`#/components/schemas/<name>`), with ajv's errors. */
export function matchesSchema(name: string, value: unknown): { valid: boolean; errors: string } {
  const validate = ajv.getSchema(pointer('components', 'schemas', name));
  if (!validate) throw new Error(`no schema ${name} in docs/openapi.yaml`);
  const valid = validate(value) === true;
  return { valid, errors: valid ? '' : ajv.errorsText(validate.errors) };
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
formats.default(ajv);
ajv.addSchema(DOCUMENT as object, 'openapi');

// Literal paths are tried before templated ones, so /v1/users/search is not taken for /v1/users/{id}.
const TEMPLATES = Object.keys(DOCUMENT.paths)
  .sort((a, b) => a.split('{').length - b.split('{').length)
  .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));

const pointer = (...parts: string[]): string =>
  `openapi#/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

/** The documented operation for a request: its template and the OpenAPI entry of its status. */
export function documented(method: string, path: string, status: number) {
  const found = TEMPLATES.find(({ pattern }) => pattern.test(path.split('?')[0] ?? ''));
  if (!found) throw new Error(`${path} is not in docs/openapi.yaml`);
  const operation = DOCUMENT.paths[found.template]?.[method.toLowerCase()];
  if (!operation) throw new Error(`${method} ${found.template} is not in docs/openapi.yaml`);
  const entry = operation.responses[String(status)];
  if (!entry) throw new Error(`${method} ${found.template} does not document status ${status}`);
  return {
    template: found.template,
    entry,
    base: pointer('paths', found.template, method.toLowerCase(), 'responses', String(status)),
  };
}

/** Fails the test when a response does not match docs/openapi.yaml. */
export function expectDocumented(res: Response): void {
  const request = (res as unknown as { req: { method: string; path: string } }).req;
  const { entry: given, base: givenBase } = documented(request.method, request.path, res.status);
  const [entry, base] = given.$ref
    ? [
        DOCUMENT.components.responses[given.$ref.split('/').pop() ?? ''],
        pointer('components', 'responses', given.$ref.split('/').pop() ?? ''),
      ]
    : [given, givenBase];
  if (!entry) throw new Error(`unresolved ${given.$ref}`);
  const problems: string[] = [];
  const json = entry.content?.['application/json'];
  const hasBody = res.text !== undefined && res.text !== '';
  if (json?.schema && request.method !== 'HEAD') {
    if (!hasBody) problems.push('the body is empty, a JSON body is documented');
    else {
      const validate = ajv.getSchema(`${base}/content/application~1json/schema`);
      if (validate && !validate(res.body)) problems.push(`body: ${ajv.errorsText(validate.errors)}`);
    }
  } else if (hasBody && request.method !== 'HEAD') {
    problems.push(`a body is sent, none is documented: ${res.text.slice(0, 200)}`);
  }
  for (const [name, header] of Object.entries(entry.headers ?? {})) {
    const value = res.headers[name.toLowerCase()] as string | string[] | undefined;
    const ref = (header as { $ref?: string }).$ref;
    const at = ref ? pointer('components', 'headers', ref.split('/').pop() ?? '') : `${base}/headers/${name}`;
    const validate = ajv.getSchema(`${at}/schema`);
    if (!validate) throw new Error(`no schema for header ${name} at ${at}`);
    for (const one of value === undefined ? [] : Array.isArray(value) ? value : [value]) {
      if (!validate(one)) problems.push(`header ${name}: ${ajv.errorsText(validate.errors)}`);
    }
  }
  if (problems.length > 0) {
    throw new Error(`${request.method} ${request.path} ${res.status} does not match docs/openapi.yaml:\n${problems.join('\n')}`);
  }
}
