import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; read it the way src/request/validate.ts does.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/**
 * A response validator over an OpenAPI 3.0/3.1 document, as contract-test
 * tools (Schemathesis, Dredd, Prism) read it: the status must be listed,
 * every header sent must be declared for that status (beyond those of the
 * transport and the representation), required headers must be there, and
 * a JSON body must match the schema of its media type.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Headers of HTTP itself and of the representation, which OpenAPI does not declare per response. */
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'content-length', 'content-type', 'transfer-encoding']);

export interface Exchange {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body, or undefined when there is none. */
  readonly body: unknown;
}

const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiResponses {
  private readonly ajv: Ajv | Ajv2020;
  constructor(private readonly doc: Json) {
    const is31 = String(doc.openapi).startsWith('3.1');
    this.ajv = is31 ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv as Ajv);
    this.ajv.addSchema(doc, 'doc');
  }

  private resolve(value: unknown): Json | undefined {
    let current = value;
    for (let depth = 0; depth < 10 && isObject(current) && typeof current.$ref === 'string'; depth++) {
      let target: unknown = this.doc;
      for (const raw of current.$ref.slice(2).split('/')) {
        const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
        target = isObject(target) ? target[key] : undefined;
      }
      current = target;
    }
    return isObject(current) ? current : undefined;
  }

  /** The path template of the document that matches `path`, if any. */
  private template(path: string): string | undefined {
    const paths = Object.keys(this.doc.paths as Json);
    if (paths.includes(path)) return path;
    return paths.find((template) => {
      const pattern = `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`;
      return new RegExp(pattern).test(path);
    });
  }

  /** What is wrong with the exchange for the document: [] when it agrees. */
  problems(exchange: Exchange): string[] {
    const at = `${exchange.method} ${exchange.path} ${exchange.status}`;
    const template = this.template(exchange.path);
    if (template === undefined) return [`${at}: no path of the document matches`];
    const item = this.resolve((this.doc.paths as Json)[template]) ?? {};
    const method = exchange.method.toLowerCase();
    let opKey = item[method] ? method : method === 'head' && item.get ? 'get' : undefined;
    // A 405 answers a method the path lacks: any operation of the path must list it.
    if (opKey === undefined && exchange.status === 405) opKey = ['get', 'post', 'put', 'patch', 'delete'].find((m) => item[m]);
    if (opKey === undefined) return [`${at}: no operation`];
    const responses = this.resolve(this.resolve(item[opKey])?.responses) ?? {};
    const statusKey = [String(exchange.status), `${String(exchange.status)[0]}XX`, 'default'].find((key) => key in responses);
    if (statusKey === undefined) return [`${at}: status not listed`];
    const response = this.resolve(responses[statusKey]) ?? {};
    const problems = this.headerProblems(at, response, exchange);
    const content = this.resolve(response.content);
    const type =
      String(exchange.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    if (content && exchange.body !== undefined && method !== 'head') {
      if (!(type in content)) return [...problems, `${at}: media type ${type} not listed`];
      const pointer = ['paths', template, opKey, 'responses', statusKey].map(pointerKey).join('/');
      const responsePointer =
        isObject(responses[statusKey]) && typeof (responses[statusKey] as Json).$ref === 'string'
          ? String((responses[statusKey] as Json).$ref).slice(2)
          : pointer;
      const validate = this.ajv.compile({ $ref: `doc#/${responsePointer}/content/${pointerKey(type)}/schema` });
      if (!validate(exchange.body)) problems.push(`${at}: body ${this.ajv.errorsText(validate.errors)}`);
    }
    return problems;
  }

  private headerProblems(at: string, response: Json, exchange: Exchange): string[] {
    const declared = new Map<string, Json>();
    for (const [name, header] of Object.entries(this.resolve(response.headers) ?? {})) {
      declared.set(name.toLowerCase(), this.resolve(header) ?? {});
    }
    const problems: string[] = [];
    for (const [name, value] of Object.entries(exchange.headers)) {
      if (TRANSPORT.has(name) || value === undefined) continue;
      const header = declared.get(name);
      if (!header) {
        problems.push(`${at}: header ${name} not declared`);
        continue;
      }
      const schema = this.resolve(header.schema);
      if (schema && !this.ajv.validate(schema, Array.isArray(value) ? value.join(', ') : value)) {
        problems.push(`${at}: header ${name}: ${this.ajv.errorsText()}`);
      }
    }
    for (const [name, header] of declared) {
      if (header.required === true && exchange.headers[name] === undefined)
        problems.push(`${at}: required header ${name} missing`);
    }
    return problems;
  }
}
