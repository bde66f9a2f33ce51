import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import express from 'express';
import request from 'supertest';
import { pageOf, paging, sendList } from '../src/index.js';
import { withConventions } from '../src/openapi/index.js';

/**
 * express-api-conventions/openapi describes the middlewares without loading
 * them (docs/architecture.md): it reads their values from the leaf files
 * they read them from, and states what they do.
 */

const LIST_DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Items', version: '1.0.0' },
  paths: {
    '/v1/items': {
      get: {
        responses: {
          '200': {
            description: 'A page of items.',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { items: { type: 'array', items: { type: 'object' } }, hasNext: { type: 'boolean' } },
                },
              },
            },
          },
        },
      },
    },
  },
};

/** The `limit` parameter withConventions() declares for a list route. */
function statedLimit(options: Parameters<typeof withConventions>[1]): unknown {
  const document = withConventions(LIST_DOCUMENT, options) as unknown as {
    components: { parameters: { limit: { schema: { default: number; maximum: number } } } };
  };
  const { default: defaultLimit, maximum } = document.components.parameters.limit.schema;
  return { defaultLimit, maxLimit: maximum };
}

/** What paging() does with the same options: the items of a page asked without `limit`, and the largest `limit` it accepts. */
async function pagingLimits(options: Parameters<typeof paging>[0]): Promise<unknown> {
  const app = express();
  const items = Array.from({ length: 300 }, (_, id) => ({ id }));
  app.get('/v1/items', paging(options), (req, res) => sendList(res, 'items', pageOf(items, req.page)));
  const page = await request(app).get('/v1/items').expect(200);
  let maxLimit = 0;
  for (const limit of [10, 20, 100, 101]) {
    if ((await request(app).get(`/v1/items?limit=${limit}`)).status === 200) maxLimit = limit;
  }
  return { defaultLimit: (page.body as { items: unknown[] }).items.length, maxLimit };
}

describe('express-api-conventions/openapi', () => {
  it.each([
    ['no paging options', undefined, { defaultLimit: 20, maxLimit: 100 }],
    ['a smaller maximum', { maxLimit: 10 }, { defaultLimit: 10, maxLimit: 10 }],
    ['both limits', { defaultLimit: 10, maxLimit: 20 }, { defaultLimit: 10, maxLimit: 20 }],
  ])("states paging()'s `limit` with %s, as paging() applies it", async (_, options, limits) => {
    expect(statedLimit(options === undefined ? {} : { paging: options })).toEqual(limits);
    expect(await pagingLimits(options)).toEqual(limits);
  });

  it('loads no middleware and no package at run time: only constant files of src/', () => {
    const SRC = resolve(__dirname, '../src');
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      // Value imports only: `import type` is erased.
      for (const match of text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)) {
        const specifier = match[1] as string;
        if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
        else packages.add(specifier);
      }
    };
    visit(resolve(SRC, 'openapi/index.ts'));
    const outside = [...seen].map((file) => relative(SRC, file)).filter((file) => !file.startsWith('openapi/'));
    expect(outside.sort()).toEqual([
      'config/configuration-error.ts',
      'config/options.ts',
      'document-parts.ts',
      'errors/reflected-input.ts',
      'http/spec.ts',
      'request/paging-defaults.ts',
      'security/defaults.ts',
      'stage-names.ts',
    ]);
    expect([...packages]).toEqual([]);
  });
});
