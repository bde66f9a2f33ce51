// The package as a user gets it: `npm pack` into a scratch folder; returns the tarball's path.
// Shared by check:package, check:docs and size:install.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export function packInto(scratch) {
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', scratch], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();
  return resolve(scratch, packed);
}
