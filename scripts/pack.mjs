// The package as a user gets it: `npm pack` into a scratch folder; returns the tarball's path.
// Shared by check:package, check:docs and size:install. `workspace` packs that
// workspace package instead of the library (the checker, the authorization server).
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export function packInto(scratch, workspace) {
  const which = workspace ? ['--workspace', workspace] : [];
  const packed = execFileSync('npm', ['pack', '--silent', ...which, '--pack-destination', scratch], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();
  return resolve(scratch, packed);
}

/** The checker's package name, as its package.json gives it. */
export const CHECKER = 'express-api-conventions-checker';

/** The authorization server's package name, as its package.json gives it. */
export const AUTHORIZATION_SERVER = 'express-api-conventions-authorization-server';
