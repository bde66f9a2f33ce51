import { readFileSync } from 'node:fs';
import { docSourceFiles } from '../support/docs.js';

/**
 * docs/guides/getting-started.md as a user copies it. `npm run check:docs`
 * (a CI step, scripts/check-docs.mjs) compiles the app this page's blocks
 * make against the packed package, starts it and runs
 * `express-api-conventions-checker check` on it with the command the page shows.
 * These tests hold the page to what once went wrong for a newcomer, without a build.
 */

const page = readFileSync('docs/guides/getting-started.md', 'utf8');
const files = docSourceFiles();
const app = files['getting-started/app.ts'] ?? '';

describe('the getting-started guide', () => {
  it('is one app: app.ts, server.ts and its test, made of the page blocks', () => {
    expect(Object.keys(files).filter((name) => name.startsWith('getting-started/'))).toEqual([
      'getting-started/app.ts',
      'getting-started/server.ts',
      'getting-started/app.test.ts',
    ]);
    expect(files['getting-started/server.ts']).toContain("import { app } from './app.js';");
  });

  it('mounts the preset once, before the routes, and the error handler once, after them', () => {
    expect(app.match(/\bconventions\(/g)).toHaveLength(1);
    expect(app.match(/notFound\(\), errorHandler\(\)/g)).toHaveLength(1);
    const preset = app.indexOf('conventions(');
    const handler = app.indexOf('notFound(), errorHandler()');
    const routes = [...app.matchAll(/app\.(get|post|put|patch|delete)\(/g)].map((match) => match.index ?? 0);
    expect(routes.length).toBeGreaterThan(0);
    expect(routes.every((at) => at > preset && at < handler)).toBe(true);
  });

  it('lists every scope a requireScope() asks for in tokenRouter.scopes', () => {
    const asked = [...app.matchAll(/requireScope\('([^']+)'\)/g)].map((match) => match[1]);
    const listed = /tokenRouter: tokenRouter\(\{[^}]*scopes: \[([^\]]*)\]/.exec(app)?.[1] ?? '';
    expect(asked.length).toBeGreaterThan(0);
    for (const scope of asked) expect(listed).toContain(`'${scope}'`);
  });

  it('answers 404 (40402) for an unknown id in the GET handler', () => {
    const get = /app\.get\('\/v1\/users\/:id'[\s\S]*?\n\}\);/.exec(app)?.[0] ?? '';
    expect(get).toContain("if (!user) throw apiError('resourceNotFound');");
  });

  it('reads secrets so that strict TypeScript accepts them (no string | undefined key)', () => {
    expect(app).not.toMatch(/secret: process\.env\./);
  });

  it('says what an unwrapped async error does on Express 4', () => {
    expect(page).not.toContain('leaves the request hanging');
    expect(page).toContain('unhandled rejection, which ends the\n   process');
  });

  it('shows the check command the docs check runs, with credentials from the environment', () => {
    expect(page).toMatch(
      /^EAC_USERNAME=alice EAC_PASSWORD=\S+ npx express-api-conventions-checker check http:\/\/127\.0\.0\.1:3000 --origin \S+ --resource \/v1\/users\/1 --protected \S+ --token-endpoint \/v1\/oauth2\/token --allow-writes$/m,
    );
  });
});
