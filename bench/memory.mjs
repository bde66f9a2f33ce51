// Store memory: `node --expose-gc bench/memory.mjs` prints JSON. Heap held by
// the in-memory rate-limit store with 100,000 active keys, filled through
// rateLimit() itself (anonymous requests from 50,000 addresses, counted by
// both default policies), then whether the keys expire and the heap is given back once their
// window is over. express-rate-limit's own MemoryStore with 100,000 keys is
// measured the same way, for scale; and the in-memory refresh-token store
// with 100,000 sign-ins. Run by bench/sections/memory-section.mjs.
import { randomBytes, randomUUID } from 'node:crypto';
import { MemoryStore } from 'express-rate-limit';
import { loadAuthorizationServer, loadLibrary } from './lib/library.mjs';
import { BENCH_RATE_LIMIT } from './lib/payload.mjs';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const MB = 2 ** 20;
const heap = () => {
  for (let i = 0; i < 3; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const address = (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

// The middleware is called directly with the few request and response
// fields it reads: an HTTP or injected request per key would leave the
// harness's own garbage in the figure.
const fakeResponse = { headersSent: false, append() {}, setHeader() {}, getHeader() {}, on() {} };
const fakeRequest = (ip) => ({
  ip,
  headers: {},
  method: 'GET',
  url: '/',
  app: { get: () => false },
  socket: { remoteAddress: ip },
});

async function rateLimitStore(library) {
  const clock = { now: Date.now() };
  const store = new library.MemoryCounterStore({ now: () => clock.now, sweepIntervalMs: 2 ** 31 - 1 });
  const middleware = library.rateLimit({ limit: BENCH_RATE_LIMIT, windowSeconds: 60, store });
  const count = (ip) =>
    new Promise((resolve, reject) => middleware(fakeRequest(ip), fakeResponse, (error) => (error ? reject(error) : resolve())));
  await count('192.0.2.1'); // first call: lazy set-up, not counted
  const sizeBefore = store.size;
  const before = heap();
  for (let i = 0; i < 50_000; i++) await count(address(i));
  const full = heap();
  const keys = store.size - sizeBefore;
  clock.now += 61_000; // every window is over
  store.sweep();
  const after = heap();
  return {
    keys,
    mbPer100k: ((full - before) / MB) * (100_000 / keys),
    keysAfterExpiry: store.size,
    mbLeftAfterExpiry: (after - before) / MB,
  };
}

async function peerStore() {
  const store = new MemoryStore();
  store.init({ windowMs: 60_000 });
  const before = heap();
  for (let i = 0; i < 100_000; i++) await store.increment(address(i));
  const full = heap();
  store.shutdown();
  return { keys: 100_000, mbPer100k: (full - before) / MB };
}

// Refresh-token families as the token endpoint creates them at sign-in:
// a random family id, the subject, the client, the scopes, and the SHA-256
// of a fresh 256-bit token. The store reads Date.now(); the clock is moved
// here so that every family expires, and the store drops expired families
// as it creates new ones (every 1,024th creation sweeps).
async function refreshTokenStore(library) {
  const store = new library.MemoryRefreshTokenStore();
  const realNow = Date.now;
  const start = realNow();
  const create = (i, expiresAt) =>
    store.create(
      { familyId: randomUUID(), subject: String(4503599627370497 + i), clientId: 'demo-client', scopes: ['users:read'] },
      library.hashRefreshToken(randomBytes(32).toString('base64url')),
      expiresAt,
    );
  const probe = library.hashRefreshToken('probe-token');
  await store.create({ familyId: 'probe', subject: 'p', clientId: undefined, scopes: [] }, probe, start + 60_000);
  const before = heap();
  for (let i = 0; i < 100_000; i++) await create(i, start + 60_000);
  const full = heap();
  try {
    Date.now = () => start + 61_000;
    for (let i = 0; i < 1024; i++) await create(i, start + 61_000 + 60_000);
  } finally {
    Date.now = realNow;
  }
  const after = heap();
  return {
    keys: 100_000,
    mbPer100k: (full - before) / MB,
    probeFoundAfterExpiry: (await store.find(probe)) !== undefined,
    mbLeftAfterExpiry: (after - before) / MB,
  };
}

const library = await loadLibrary();
const result = {
  rateLimit: await rateLimitStore(library),
  expressRateLimit: await peerStore(),
  refreshTokens: await refreshTokenStore(await loadAuthorizationServer()),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
