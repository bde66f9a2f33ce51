import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { CORS_DEFAULT_EXPOSED_HEADERS } from '../src/cors/options.js';
import { INTROSPECTION_PATH, REVOCATION_PATH, TOKEN_PATH } from '../src/oauth2/token-router.js';
import {
  CONVENTIONS_OPTION_NAMES,
  CORS_EXPOSED_HEADERS,
  RATE_LIMIT_DEFAULTS,
  SECURITY_HEADER_VALUES,
  TOKEN_SERVICE_PATHS,
} from '../src/openapi/values.js';
import { STAGE_NAMES } from '../src/preset.js';
import {
  DEFAULT_APPLICATION_POLICY,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RATE_WINDOW_SECONDS,
  DEFAULT_USER_POLICY,
} from '../src/rate-limit/options.js';
import { SECURITY_HEADERS } from '../src/security/security-headers.js';

/**
 * express-api-conventions/openapi describes the middlewares without loading
 * them (docs/design.md principle 9): its copies of their values stay equal to
 * the originals, and what it imports at run time is a few constant files.
 */

describe('express-api-conventions/openapi', () => {
  it('states the values the middlewares send', () => {
    expect(SECURITY_HEADER_VALUES).toEqual(SECURITY_HEADERS);
    expect(CORS_EXPOSED_HEADERS).toEqual(CORS_DEFAULT_EXPOSED_HEADERS);
    expect(TOKEN_SERVICE_PATHS).toEqual({ token: TOKEN_PATH, revocation: REVOCATION_PATH, introspection: INTROSPECTION_PATH });
    expect(RATE_LIMIT_DEFAULTS).toEqual({
      limit: DEFAULT_RATE_LIMIT,
      windowSeconds: DEFAULT_RATE_WINDOW_SECONDS,
      policies: [DEFAULT_USER_POLICY, DEFAULT_APPLICATION_POLICY],
    });
    expect(CONVENTIONS_OPTION_NAMES).toEqual([...STAGE_NAMES, 'before', 'after', 'reportOnly']);
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
      'errors/reflected-input.ts',
      'http/spec.ts',
    ]);
    expect([...packages]).toEqual([]);
  });
});
