import { readFileSync } from 'node:fs';
import { lookAlikeOrigin } from '../src/conformance/cors-checks.js';
import { isSpecCacheControl } from '../src/conformance/header-checks.js';
import { CONFORMANCE_CHECK_IDS, CONFORMANCE_CHECKS, formatReport } from '../src/conformance/index.js';
import { reflectionPath } from '../src/conformance/json-checks.js';
import { pathFindings } from '../src/conformance/path-checks.js';
import { buildReport } from '../src/conformance/report.js';

const ids = (path: string) => pathFindings(path).map((finding) => finding.id);

// The rules themselves are src/lint/path-rules.ts, shared with the route linter (test/path-rules.test.ts).
describe('path rules (SPEC.md "Path rules")', () => {
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
      ['/v1/me', 'paths.plural-nouns'],
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

describe('Cache-Control values (SPEC.md "Caching" and "Security response headers")', () => {
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

describe('the check catalogue', () => {
  it('has ids of the form <area>.<name>, each with a section, a title and a SPEC.md rule', () => {
    for (const id of CONFORMANCE_CHECK_IDS) {
      expect(id).toMatch(/^[a-z]+\.[a-z0-9.-]+$/);
      expect(CONFORMANCE_CHECKS[id].rule).toMatch(/^SPEC\.md /);
    }
  });
});

describe('docs/conformance.md', () => {
  // Table rows, cells trimmed (the formatter pads them); `\|` inside a cell is not a separator.
  const rows = readFileSync('docs/conformance.md', 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/\\\|/g, '|')),
    );

  it.each(CONFORMANCE_CHECK_IDS)('documents %s with its title and rule', (id) => {
    expect(rows).toContainEqual([
      `\`${id}\``,
      CONFORMANCE_CHECKS[id].title,
      CONFORMANCE_CHECKS[id].rule.replace(/^SPEC\.md /, ''),
    ]);
  });

  it('documents no check that the catalogue does not have', () => {
    const documented = rows.map((row) => row[0]).filter((cell) => /^`[a-z]+\.[a-z0-9.-]+`$/.test(cell as string));
    expect(documented.sort()).toEqual(CONFORMANCE_CHECK_IDS.map((id) => `\`${id}\``).sort());
  });
});

describe('formatReport()', () => {
  it('prints a table by section, with the evidence under each failure and the reason under each skip', () => {
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
        'Conformance of http://127.0.0.1:3000/ to SPEC.md',
        '',
        'Common response behaviour',
        '  FAIL  common.date    `Date` in HTTP-date format (GMT) on every response except 5xx',
        '        request:  GET /v1/users -> 200',
        '        expected: Date: an HTTP-date in GMT',
        '        seen:     Date (absent)',
        '        rule:     SPEC.md "Common response behaviour" rule 2',
        '',
        'Security response headers',
        '  pass  security.hsts  `Strict-Transport-Security: max-age=63072000; includeSubDomains`',
        '',
        'Caching',
        '  skip  caching.etag   The resource carries an `ETag`',
        '        skipped:  needs a resource URL',
        '',
        'checks: 1 pass, 1 fail, 1 skip; 3 requests sent',
        '',
      ].join('\n'),
    );
    expect(report.ok).toBe(false);
    expect(report.failures.map((failure) => failure.id)).toEqual(['common.date']);
  });
});
