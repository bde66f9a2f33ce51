// The npm registry this project is built against serves only the linux-x64
// builds of packages that ship per-platform binaries as optional
// dependencies (Biome, jest's resolver), so `npm install` writes a lock
// without the other platforms' entries, and `npm ci` then refuses that lock as
// out of sync. This adds a version-only entry for each missing optional
// package; `npm ci` skips such an entry where it does not fit or cannot be had.
// Run it after every `npm install`: `npm run lock:complete`.
import { readFileSync, writeFileSync } from 'node:fs';

const path = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [where, node] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(node.optionalDependencies ?? {})) {
    const nested = `${where ? `${where}/` : ''}node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    packages[`node_modules/${name}`] = { version, optional: true, ...(node.dev ? { dev: true } : {}) };
    added++;
  }
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
