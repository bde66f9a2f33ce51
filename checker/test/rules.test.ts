import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import { RULE_PAGE } from '../src/catalogue.js';
import { lookAlikeOrigin } from '../src/cors-checks.js';
import { isSpecCacheControl } from '../src/header-checks.js';
import { CHECK_TRIAGE, CONFORMANCE_CHECK_IDS, CONFORMANCE_CHECKS, checkConventions, formatReport } from '../src/index.js';
import { reflectionPath } from '../src/json-checks.js';
import { pathFindings } from '../src/path-checks.js';
import { largeIntegerFindings, readRawJson } from '../src/raw-json.js';
import { buildReport } from '../src/report.js';
import { nestingFindings } from '../src/resource-checks.js';

/** The repository: the pages the checker cites (docs/) live there, not in this package. */
const REPOSITORY = join(__dirname, '..', '..');
const ids = (path: string) => pathFindings(path).map((finding) => finding.id);

// The rules themselves are src/lint/path-rules.ts, shared with the route linter (checker/test/path-rules-agree.test.ts).
describe('path rules (docs/conventions.md section 3)', () => {
  describe('paths that follow every rule', () => {
    it.each([
      '/v1/users',
      '/v1/users/123',
      '/v1/users/123/friends',
      '/v1/users/search',
      '/v1/oauth2/token',
      '/v1/order-items/9/shipping-addresses',
      '/v2/people',
      '/v1/users/me',
    ])('%s has no finding', (path) => {
      expect(pathFindings(path)).toEqual([]);
    });
  });

  describe('paths that break one', () => {
    it.each([
      ['/users/1', 'paths.version-first'],
      ['/v1.2/users', 'paths.version-first'],
      ['/api/v1/users', 'paths.version-first'],
      ['/v1/Users', 'paths.lowercase'],
      ['/v1/user', 'paths.plural-nouns'],
      ['/v1/self', 'paths.plural-nouns'],
      ['/v1/users/1/address', 'paths.plural-nouns'],
      ['/v1/get-users', 'paths.no-verbs'],
      ['/v1/users/1/delete', 'paths.no-verbs'],
      ['/v1/users/list', 'paths.no-list'],
      ['/v1/users.json', 'paths.no-extensions'],
      ['/v1/users/index.php', 'paths.no-extensions'],
      ['/v1/order_items', 'paths.hyphens'],
      ['/v1/users/j%C3%B6rg', 'paths.no-percent-encoding'],
      ['/v1/users/1/orders/2', 'paths.shape'],
      ['/v1/users/find', 'paths.search-segment'],
      ['/v1/servlets/users', 'paths.no-extensions'],
    ])('%s breaks %s', (path, id) => {
      expect(ids(path)).toContain(id);
    });

    it('reports camelCase both as upper case and as words not joined by hyphens', () => {
      expect(ids('/v1/orderItems')).toEqual(['paths.lowercase', 'paths.hyphens']);
    });
  });
});

describe('Cache-Control values (docs/conventions.md sections 7 and 11)', () => {
  it.each(['no-store, max-age=0', 'max-age=0, no-store', 'no-store', 'no-cache', 'public, max-age=60', 'max-age=3600,public'])(
    'accepts %j',
    (value) => {
      expect(isSpecCacheControl(value)).toBe(true);
    },
  );

  it.each(['private', 'max-age=60', 'no-cache, no-store, must-revalidate', 'public', 'no-store, max-age=60', ''])(
    'refuses %j',
    (value) => {
      expect(isSpecCacheControl(value)).toBe(false);
    },
  );
});

describe('CORS look-alike origin', () => {
  it('suffixes the host, keeping scheme and port', () => {
    expect(lookAlikeOrigin('http://localhost:5173')).toBe('http://localhost.attacker.invalid:5173');
    expect(lookAlikeOrigin('https://app.example')).toBe('https://app.example.attacker.invalid');
  });
});

describe('the reflection probe', () => {
  it('goes where {probe} is, or into q', () => {
    expect(reflectionPath('/v1/users/search?q={probe}')).toBe('/v1/users/search?q=%3Ceac-probe%3E');
    expect(reflectionPath('/v1/echo')).toBe('/v1/echo?q=%3Ceac-probe%3E');
    expect(reflectionPath('/v1/users/search?limit=1')).toBe('/v1/users/search?limit=1&q=%3Ceac-probe%3E');
  });
});

/** The rows of docs/spec-coverage.md, by section anchor (GitHub's heading slugs): the first cell of each table row. */
function coverageRows(): Map<string, Set<string>> {
  const rows = new Map<string, Set<string>>();
  let section: Set<string> | undefined;
  for (const line of readFileSync(join(REPOSITORY, RULE_PAGE), 'utf8').split('\n')) {
    if (line.startsWith('## ')) {
      const anchor = line
        .slice(3)
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-');
      section = new Set();
      rows.set(anchor, section);
    } else if (line.startsWith('| ') && !line.startsWith('| --')) section?.add(line.split('|')[1]?.trim() as string);
  }
  return rows;
}

describe('the check catalogue', () => {
  const rows = coverageRows();

  it.each(CONFORMANCE_CHECK_IDS)('%s cites rows that docs/spec-coverage.md has', (id) => {
    expect(id).toMatch(/^[a-z]+\.[a-z0-9.-]+$/);
    const { rule } = CONFORMANCE_CHECKS[id];
    expect(rule.startsWith(`${RULE_PAGE}#`)).toBe(true);
    expect(rule).not.toContain('SPEC.md');
    for (const reference of rule.slice(RULE_PAGE.length).split('; ')) {
      const [, anchor, cited] = /^#([a-z0-9-]+) (.+)$/.exec(reference) ?? [];
      expect(rows.has(anchor as string)).toBe(true);
      for (const [, row] of (cited as string).matchAll(/"([^"]+)"/g))
        expect([...(rows.get(anchor as string) ?? [])]).toContain(row);
    }
  });
});

describe('docs/conformance.md', () => {
  // Table rows, cells trimmed (the formatter pads them); `\|` inside a cell is not a separator.
  const rows = readFileSync(join(REPOSITORY, 'docs/conformance.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/\\\|/g, '|')),
    );

  it.each(CONFORMANCE_CHECK_IDS)('documents %s with its title, rule, severity and cause', (id) => {
    expect(rows).toContainEqual([
      `\`${id}\``,
      CONFORMANCE_CHECKS[id].title,
      CONFORMANCE_CHECKS[id].rule,
      CHECK_TRIAGE[id].severity,
      `\`${CHECK_TRIAGE[id].cause}\``,
    ]);
  });

  it('documents no check that the catalogue does not have', () => {
    const documented = rows.map((row) => row[0]).filter((cell) => /^`[a-z]+\.[a-z0-9.-]+`$/.test(cell as string));
    expect(documented.sort()).toEqual(CONFORMANCE_CHECK_IDS.map((id) => `\`${id}\``).sort());
  });
});

describe('formatReport()', () => {
  it('prints a table by section, then the failures by cause with the fix and the evidence of each', () => {
    const report = buildReport('http://127.0.0.1:3000/', 3, [
      { id: 'security.hsts', ...CONFORMANCE_CHECKS['security.hsts'], status: 'pass' },
      {
        id: 'common.date',
        ...CONFORMANCE_CHECKS['common.date'],
        status: 'fail',
        evidence: { request: 'GET /v1/users -> 200', expected: 'Date: an HTTP-date in GMT', seen: 'Date (absent)' },
      },
      { id: 'caching.etag', ...CONFORMANCE_CHECKS['caching.etag'], status: 'skip', reason: 'needs a resource URL' },
    ]);
    expect(formatReport(report)).toBe(
      [
        'Conformance of http://127.0.0.1:3000/ to the API conventions (docs/conventions.md)',
        '',
        'Common response behaviour',
        '  FAIL  common.date    `Date` in HTTP-date format (GMT) on every response except 5xx  [MUST]',
        '',
        'Security response headers',
        '  pass  security.hsts  `Strict-Transport-Security: max-age=63072000; includeSubDomains`',
        '',
        'Caching',
        '  skip  caching.etag   The resource carries an `ETag`',
        '        skipped:  needs a resource URL',
        '',
        'What to fix: 1 failing check from 1 cause',
        '',
        'MUST  `Date` or `X-Powered-By` is wrong (1 check)',
        '  fix:        Mount `commonHeaders()` (express-api-conventions/service; in `conventions()`): it writes `Date` and removes `X-Powered-By`.',
        '  elsewhere:  Send `Date` as an HTTP-date in GMT on every response but a 5xx; disable `X-Powered-By` (`app.disable("x-powered-by")`).',
        '  docs:       docs/headers.md',
        '  FAIL  common.date  [MUST]  `Date` in HTTP-date format (GMT) on every response except 5xx',
        '        request:  GET /v1/users -> 200',
        '        expected: Date: an HTTP-date in GMT',
        '        seen:     Date (absent)',
        '        rule:     docs/spec-coverage.md#common-response-behaviour "2"',
        '',
        'FAILS --fail-on must: 1 MUST finding',
        'checks: 1 pass, 1 fail, 1 skip; 3 requests sent',
        '',
      ].join('\n'),
    );
    expect(report.ok).toBe(false);
    expect(report.failures.map((failure) => failure.id)).toEqual(['common.date']);
  });
});

describe('large integers, read from the body text', () => {
  const findings = (text: string) => largeIntegerFindings(readRawJson(text) as NonNullable<ReturnType<typeof readRawJson>>);

  it('keeps the digits JSON.parse would round', () => {
    expect(readRawJson('{"id":7530173704672641025}')).toEqual({
      kind: 'object',
      entries: [['id', { kind: 'number', text: '7530173704672641025' }]],
    });
  });

  it('passes an id whose digits are those of id_str', () => {
    expect(findings('{"users":[{"id":7530173704672641025,"id_str":"7530173704672641025"}]}')).toEqual({
      findings: [],
      seen: true,
    });
  });

  it('fails the digits a JavaScript number prints beside the exact string', () => {
    expect(findings('{"id":7530173704672641000,"id_str":"7530173704672641025"}').findings).toEqual([
      { path: 'id', seen: '"id": 7530173704672641000 beside "id_str": "7530173704672641025"' },
    ]);
  });

  it('fails an integer beyond 2^53 without its _str sibling, and an exponent beside the string', () => {
    expect(findings('{"a":{"id":9007199254740993}}').findings).toEqual([
      { path: 'a.id', seen: '"id": 9007199254740993 without "id_str"' },
    ]);
    expect(findings('{"id":1e3,"id_str":"1000"}').findings).toHaveLength(1);
  });

  it('sees nothing to judge in small ids', () => {
    expect(findings('{"id":42,"name":"x"}')).toEqual({ findings: [], seen: false });
  });

  it('reads only JSON', () => {
    expect(readRawJson('{"a":1,}')).toBeUndefined();
    expect(readRawJson('<html>')).toBeUndefined();
    expect(readRawJson('{"a":"x"} tail')).toBeUndefined();
  });
});

describe('nesting', () => {
  it('allows objects in arrays and two objects of the same structure side by side', () => {
    expect(
      nestingFindings({ users: [{ id: 1 }], sender: { name: 'a', email: 'b' }, recipient: { email: 'c', name: 'd' } }),
    ).toEqual([]);
  });

  it('reports a nested object whose structure occurs once', () => {
    expect(nestingFindings({ users: [{ id: 1, address: { city: 'x' } }] })).toEqual([
      '"users[].address" is a nested object whose structure occurs once',
    ]);
  });
});

describe('checks on every error and every 304 the run sees', () => {
  it('fails a 401 with an empty body on the error shape, and accepts an OAuth 2.0 challenge naming its error', async () => {
    const app = express()
      .get('/v1/things', (req, res) => {
        if (req.get('authorization') === undefined) res.status(401).set('WWW-Authenticate', 'Bearer realm="api"').end();
        else res.status(401).set('WWW-Authenticate', 'Bearer error="invalid_token"').json({ error: 'invalid_token' });
      })
      .use((_req, res) => {
        res.status(404).json({ errors: [{ message: 'No endpoint answers this URI.', code: 40401 }] });
      });
    const report = await checkConventions(app, { protected: '/v1/things' });
    expect(report.results.find((result) => result.id === 'errors.body-shape')?.evidence).toEqual({
      request: 'GET /v1/things -> 401',
      expected: 'a JSON object { errors: [{ message: string, code: integer }, ...] }',
      seen: 'an empty body',
    });
  });

  it('fails a 304 to a request that sent no cache information', async () => {
    const app = express().get('/v1/things', (_req, res) => {
      res.status(304).end();
    });
    const report = await checkConventions(app, { paths: ['/v1/things'] });
    expect(report.results.find((result) => result.id === 'caching.not-modified-only-conditional')?.evidence).toEqual({
      request: 'GET /v1/things -> 304',
      expected: '304 with an empty body, only to a conditional request',
      seen: 'a 304 to a request without If-None-Match or If-Modified-Since',
    });
  });
});

describe('docs/conformance.md, coverage of the conventions', () => {
  // The rows of spec-coverage.md by section heading (the "Not testable" list aside), and the coverage table.
  const sections = new Map<string, string[]>();
  let heading = '';
  for (const line of readFileSync(join(REPOSITORY, RULE_PAGE), 'utf8').split('\n')) {
    if (line.startsWith('## ')) heading = line.slice(3);
    else if (line.startsWith('| ') && !line.startsWith('| --') && heading !== 'Not testable, and why') {
      const row = line.split('|')[1]?.trim() as string;
      if (!['rule', 'record', 'parameter'].includes(row)) sections.set(heading, [...(sections.get(heading) ?? []), row]);
    }
  }
  const page = readFileSync(join(REPOSITORY, 'docs/conformance.md'), 'utf8');
  const table = page.slice(page.indexOf('## Coverage of the conventions'));
  const coverage = new Map(
    table
      .split('\n')
      .filter((line) => line.includes(' › '))
      .map((line) => {
        const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
        return [cells[1] as string, { checks: cells[2] as string, reason: cells[3] as string }];
      }),
  );
  const rows = [...sections].flatMap(([section, names]) => names.map((name) => `${section} › ${name}`));

  it('reads every row of docs/spec-coverage.md', () => {
    expect(rows.length).toBeGreaterThan(90);
  });

  it.each(rows)('names the check of %s, or why it cannot be observed', (row) => {
    const entry = coverage.get(row);
    expect(entry).toBeDefined();
    expect(`${entry?.checks}${entry?.reason}`.trim()).not.toBe('');
    for (const [, id] of (entry?.checks ?? '').matchAll(/`([a-z]+\.[a-z0-9.*-]+)`/g)) {
      const known = (id as string).endsWith('.*')
        ? CONFORMANCE_CHECK_IDS.some((check) => check.startsWith((id as string).slice(0, -1)))
        : (CONFORMANCE_CHECK_IDS as string[]).includes(id as string);
      expect(known).toBe(true);
    }
  });

  it('lists no row that docs/spec-coverage.md does not have, and leaves no check out', () => {
    expect([...coverage.keys()].sort()).toEqual([...rows].sort());
    const named = [...table.matchAll(/`([a-z]+\.[a-z0-9.-]+)`/g)].map((match) => match[1]);
    const uncovered = CONFORMANCE_CHECK_IDS.filter(
      (id) => !named.includes(id) && !named.some((name) => name?.endsWith('.') && id.startsWith(name)),
    );
    expect(uncovered.filter((id) => !id.startsWith('cors.preflight.'))).toEqual([]);
  });
});
