'use strict';
// One thread of PasswordHasher's pool (password-hasher.ts): bcrypt of what the
// main thread hands over, one task at a time. A plain CommonJS file, not
// TypeScript, so the same file runs beside the built module (dist/cjs, where
// the build copies it) and beside the source under ts-jest; it loads bcryptjs
// from its own location, as the package itself would.
const { parentPort } = require('node:worker_threads');
const bcrypt = require('bcryptjs');

parentPort.on('message', (task) => {
  try {
    const result = task.op === 'hash' ? bcrypt.hashSync(task.password, task.cost) : bcrypt.compareSync(task.password, task.hash);
    parentPort.postMessage({ id: task.id, result });
  } catch (error) {
    parentPort.postMessage({ id: task.id, error: String(error?.message ? error.message : error) });
  }
});
