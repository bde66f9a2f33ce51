import express from 'express';
import { PATH_RULES } from 'express-api-conventions/extend';
import { checkPath, checkRoutes, type PathRule, type RouteRule } from 'express-api-conventions/lint';
import { type CheckId, checkConventions } from '../src/index.js';
import { consistencyFindings, PATH_CHECK_IDS, pathFindings } from '../src/path-checks.js';

/**
 * The conventions' path rules are written once (src/lint/path-rules.ts) and the
 * checker runs a byte-for-byte copy of them (rules-agree.test.ts): the
 * library's route linter and the checker give every path the same
 * verdict, rule by rule. Each row is a concrete path (the checker sees
 * concrete paths; the linter reads it as a route) and the rules it breaks.
 */
const TABLE: readonly [string, readonly PathRule[]][] = [
  ['/v1/users', []],
  ['/v1/users/123', []],
  ['/v1/users/123/friends', []],
  ['/v1/users/search', []],
  ['/v1/oauth2/token', []],
  ['/v1/order-items/9/shipping-addresses', []],
  ['/v2/people', []],
  ['/v1/sessions/current', []],
  ['/v1/users/j_doe', []],
  // The disputed words (docs/lint.md, "Words the two checks used to disagree on").
  ['/v1/status', ['plural']],
  ['/v1/legacy/7', ['plural']],
  ['/v1/stop-requests', []],
  ['/v1/jobs/7/stop', ['noVerb']],
  ['/v1/devices/7/sync', ['noVerb']],
  ['/v1/emails/7/verify', ['noVerb']],
  ['/v1/verify-emails', ['noVerb']],
  ['/v1/reports/7/view', ['noVerb']],
  ['/v1/view-counts', []],
  // One rule each.
  ['/users/1', ['version']],
  ['/v1.2/users', ['version']],
  ['/api/v1/users', ['version']],
  ['/v1/users/1/orders/2', ['shape']],
  ['/v1/Users', ['lowerCase']],
  ['/v1/users/AB12', ['lowerCase']],
  ['/v1/orderItems', ['lowerCase', 'hyphen']],
  ['/v1/user', ['plural', 'consistent']],
  // The caller alias stands for a collection and an id: /v1/me is /v1/users/{caller}.
  ['/v1/me', []],
  ['/v1/me/exports', []],
  ['/v1/me/exports/7/items', ['shape']],
  ['/v1/users/me', []],
  ['/v1/self', ['plural']],
  // RFC 8615 well-known URIs are outside the versioned path space; the conventions' token endpoint and
  // its RFC 7009 / RFC 7662 siblings follow the rules.
  ['/.well-known/oauth-authorization-server', []],
  ['/.well-known/openid-configuration', []],
  ['/v1/oauth2/revocations', []],
  ['/v1/oauth2/introspections', []],
  // No version: one finding for it, not one per segment whose role it leaves unknown.
  ['/api/users/1', ['version']],
  ['/1/2/3', ['version']],
  ['/v1/users/1/2', ['shape']],
  ['/v1/users/1/address', ['plural']],
  ['/v1/get-users', ['noVerb']],
  ['/v1/users/1/delete', ['noVerb']],
  ['/v1/logout', ['noVerb']],
  ['/v1/caf%C3%A9s', ['noPercentEncoding']],
  ['/v1/order_items', ['hyphen']],
  ['/v1/users/find', ['search']],
  ['/v1/users/list', ['noList']],
  ['/v1/order-list', ['noList']],
  ['/v1/users.json', ['noTechnology']],
  ['/v1/users/index.php', ['noTechnology']],
  ['/v1/servlets/users', ['noTechnology']],
];

const PATHS = TABLE.map(([path]) => path);

/** The linter's rules per path, with every row registered on one app (so rule 9 sees them all). */
function linterVerdicts(): Map<string, RouteRule[]> {
  const app = express();
  for (const path of PATHS) app.get(path, (_req, res) => res.json({}));
  const verdicts = new Map<string, RouteRule[]>(PATHS.map((path) => [path, []]));
  for (const finding of checkRoutes(app, { report: 'none' })) verdicts.get(finding.path)?.push(finding.rule);
  return verdicts;
}

/** The checker's check ids per path, rule 9 taken over the whole table as a run takes it over every path it saw. */
function checkerVerdicts(): Map<string, CheckId[]> {
  const across = consistencyFindings(PATHS);
  return new Map(PATHS.map((path) => [path, [...pathFindings(path), ...(across.get(path) ?? [])].map((finding) => finding.id)]));
}

const sorted = <T>(values: readonly T[]): T[] => [...new Set(values)].sort();

describe('one implementation of the path rules (docs/conventions.md section 3)', () => {
  const linter = linterVerdicts();
  const checker = checkerVerdicts();

  it('names a check id for every rule, and every rule is a paths.* check', () => {
    expect(Object.keys(PATH_CHECK_IDS).sort()).toEqual(Object.keys(PATH_RULES).sort());
  });

  it.each(TABLE)('%s: the linter and the checker break the same rules (%j)', (path, rules) => {
    expect(sorted(linter.get(path) ?? [])).toEqual(sorted(rules));
    expect(sorted(checker.get(path) ?? [])).toEqual(sorted(rules.map((rule) => PATH_CHECK_IDS[rule])));
  });

  it('answers the example of docs/lint.md', () => {
    expect(checkPath('/v1/status')).toEqual({
      findings: [{ rule: 'plural', message: '"status" is singular; resource names are plural nouns, such as "statuses".' }],
      suggestion: '/v1/statuses',
      collections: ['status'],
    });
    expect(checkPath('/v1/me', { plural: ['me'] }).findings).toEqual([]);
  });

  it('reports a missing version once, and no segment of such a path as a singular collection', () => {
    expect(checkPath('/api/users/1').findings).toEqual([
      { rule: 'version', message: 'The path has no version; it must start with /v<major>, such as /v1.' },
    ]);
    expect(checkPath('/1/2/3').findings).toHaveLength(1);
  });

  it('knows the caller alias "me" without an exception, and only right after the version', () => {
    expect(checkPath('/v1/me')).toEqual({ findings: [], suggestion: '/v1/me', collections: [] });
    expect(checkPath('/v1/me/exports').collections).toEqual(['exports']);
    expect(checkPath('/v1/orders/1/me').findings.map((f) => f.rule)).toEqual(['plural']);
  });

  it('leaves RFC 8615 well-known URIs alone, whatever their names', () => {
    expect(checkPath('/.well-known/oauth-authorization-server')).toEqual({
      findings: [],
      suggestion: '/.well-known/oauth-authorization-server',
      collections: [],
    });
  });

  it('gives the same messages through both', () => {
    for (const path of PATHS) {
      const fromLinter = checkRoutes(
        express().get(path, () => undefined),
        { report: 'none' },
      ).map((f) => f.message);
      expect(pathFindings(path).map((f) => f.why)).toEqual(fromLinter);
    }
  });

  it('a conformance run over the table fails exactly the checks of the rules the linter reports', async () => {
    const app = express();
    for (const path of PATHS) app.get(path, (_req, res) => res.json({}));
    const report = await checkConventions(app, { paths: PATHS, maxRequests: 200 });
    const failed = report.results.filter((r) => r.id.startsWith('paths.') && r.status === 'fail').map((r) => r.id);
    const linted = [...linter.values()].flat().map((rule) => PATH_CHECK_IDS[rule]);
    expect(sorted(failed)).toEqual(sorted(linted));
    expect(report.results.find((r) => r.id === 'paths.plural-nouns')?.evidence?.seen).toContain(
      `/v1/status (given): ${checkPath('/v1/status').findings[0]?.message}`,
    );
  });
});
