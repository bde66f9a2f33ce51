import type { AddressInfo } from 'node:net';
import {
  hashPassword,
  MemoryClientStore,
  MemoryCounterStore,
  MemoryRefreshTokenStore,
  MemoryUserStore,
  RedisClientStore,
  RedisCounterStore,
  RedisRefreshTokenStore,
  RedisUserStore,
} from 'express-api-conventions';
import { createApp, type Services } from './app.js';
import { BROWSER_PAGE_CLIENT_ID } from './auth.js';
import { sharedSecret } from './secrets.js';
import { SessionStore } from './sessions/store.js';
import { readSettings, type Settings, SettingsError } from './settings.js';
import { connectRedis, MemoryState, type RedisClient, RedisState } from './state.js';
import { UserRepository } from './users/repository.js';
import { seedUsers } from './users/seed.js';

/** Every store the service shares between instances: in memory, or all of them in one Redis. */
function openStores(redis: RedisClient | undefined) {
  if (!redis) {
    return {
      state: new MemoryState(),
      accounts: new MemoryUserStore(),
      clients: new MemoryClientStore(),
      refreshTokens: new MemoryRefreshTokenStore(),
      counters: new MemoryCounterStore(),
    };
  }
  return {
    state: new RedisState(redis),
    accounts: new RedisUserStore({ client: redis }),
    clients: new RedisClientStore({ client: redis }),
    refreshTokens: new RedisRefreshTokenStore({ client: redis }),
    counters: new RedisCounterStore({ client: redis }),
  };
}

/**
 * Starts the reference server: reads the settings, opens the shared state
 * (memory, or Redis with REDIS_URL), seeds the demo data, listens, and on
 * SIGTERM stops accepting, finishes the requests in flight and exits 0.
 */
async function start(settings: Settings): Promise<void> {
  const redis = settings.redisUrl ? await connectRedis(settings.redisUrl) : undefined;
  const { state, accounts, clients, refreshTokens, counters } = openStores(redis);
  const users = new UserRepository(state);

  // The demo user (a user of the API and an account that signs in) and the demo application.
  const demoUser = { name: 'Alice Liddell', email: `${settings.demoUsername}@example.com`, gender: 'female' as const };
  const demoId = await seedUsers(state, users, demoUser);
  // The password is kept only as a bcrypt hash, made off the event loop.
  const passwordHash = await hashPassword(settings.demoPassword, { cost: settings.passwordCost });
  await accounts.add({ username: settings.demoUsername, subject: demoId.toString(), passwordHash });
  await clients.add({ id: settings.demoClientId, secret: settings.demoClientSecret });
  // The browser page cannot keep a secret: it signs in as a public client (RFC 6749 §2.1).
  await clients.add({ id: BROWSER_PAGE_CLIENT_ID, grants: ['password', 'refresh_token'] });

  const services: Services = {
    state,
    users,
    sessions: new SessionStore(state),
    accounts,
    clients,
    refreshTokens,
    counters,
    secrets: {
      token: settings.tokenSecret ?? (await sharedSecret(state, 'access-token')),
      csrf: await sharedSecret(state, 'csrf'),
      partition: await sharedSecret(state, 'rate-limit-partition'),
    },
  };
  const app = createApp(settings, services);

  const server = app.listen(settings.port, settings.host, () => {
    const { port } = server.address() as AddressInfo;
    const mode = redis ? 'state in Redis' : 'state in memory';
    console.log(`reference server listening on http://${settings.host}:${port} (${mode})`);
  });
  server.on('error', (error) => {
    console.error(`reference server: cannot listen on ${settings.host}:${settings.port}: ${error.message}`);
    process.exit(1);
  });

  const stop = (signal: string) => {
    console.log(`reference server: ${signal}: finishing requests in flight`);
    // close() stops accepting and waits for open requests. Keep-alive
    // connections would hold it open once idle, so each is closed as soon as
    // its request is answered.
    const sweeper = setInterval(() => server.closeIdleConnections(), 50);
    server.close(async () => {
      clearInterval(sweeper);
      await redis?.close();
      console.log('reference server: stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

try {
  await start(readSettings());
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`reference server: cannot start: ${message}`);
  if (!(error instanceof SettingsError) && error instanceof Error && error.stack) console.error(error.stack);
  process.exit(1);
}
