import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as entry from '../src/index.js';

/**
 * The package's runtime names, listed: every exported name is a promise to
 * keep, so adding or removing one is a deliberate change of this list, and
 * each is named in the package's README.md or a page under the repository's
 * docs/ (where the authorization server is documented).
 */

const REPOSITORY = resolve(__dirname, '..', '..');
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((found) =>
    found.isDirectory() ? walk(join(dir, found.name)) : found.name.endsWith('.md') ? [join(dir, found.name)] : [],
  );
const pages = [join(REPOSITORY, 'authorization-server', 'README.md'), ...walk(join(REPOSITORY, 'docs'))];
const words = new Set(
  pages
    .map((page) => readFileSync(page, 'utf8'))
    .join('\n')
    .match(/[A-Za-z_$][\w$]*/g),
);

const NAMES = [
  'AUTHORIZATION_PATH',
  'CLIENT_TYPES',
  'DEFAULT_SESSION_TTL_SECONDS',
  'DEVICE_COOKIE',
  'LEGACY_GRANTS',
  'MemoryClientStore',
  'MemoryCodeStore',
  'MemoryConsentStore',
  'MemoryRefreshTokenStore',
  'MemorySessionStore',
  'MemorySignInGuardStore',
  'MemoryUserStore',
  'PasswordHasher',
  'RedisClientStore',
  'RedisCodeStore',
  'RedisConsentStore',
  'RedisRefreshTokenStore',
  'RedisSessionStore',
  'RedisSignInGuardStore',
  'RedisUserStore',
  'RotatingKeys',
  'describeDevice',
  'deviceCookies',
  'hashPassword',
  'normalizeUsername',
  'passwordSignIn',
  'revokeRefreshToken',
  'sessionFromCookie',
  'signInGuard',
  'tokenEndpointErrors',
  'tokenRouter',
  'usernameAllowed',
  'verifyPassword',
];

describe('the runtime names of express-api-conventions-authorization-server', () => {
  const names = Object.keys(entry)
    .filter((name) => name !== '__esModule')
    .sort();

  it('are exactly the listed ones', () => {
    expect(names).toEqual(NAMES);
  });

  it('are each named in the package README.md or docs/', () => {
    expect(names.filter((name) => !words.has(name))).toEqual([]);
  });
});
