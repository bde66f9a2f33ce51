import type { AddressInfo } from 'node:net';
import { MemoryCounterStore, RedisCounterStore } from 'express-api-conventions';
import { Accounts } from './accounts.js';
import { createApp, type Services } from './app.js';
import { sharedSecret } from './secrets.js';
import { SessionStore } from './sessions/store.js';
import { readSettings, type Settings, SettingsError } from './settings.js';
import { connectRedis, MemoryState, type RedisClient, RedisState } from './state.js';
import { UserRepository } from './users/repository.js';
import { seedUsers } from './users/seed.js';

/**
 * Starts the reference server: reads the settings, opens the shared state
 * (memory, or Redis with REDIS_URL), seeds the demo data, listens, and on
 * SIGTERM stops accepting, finishes the requests in flight and exits 0.
 */
async function start(settings: Settings): Promise<void> {
  const redis: RedisClient | undefined = settings.redisUrl ? await connectRedis(settings.redisUrl) : undefined;
  const state = redis ? new RedisState(redis) : new MemoryState();
  const users = new UserRepository(state);
  const accounts = new Accounts();

  const demoUser = { name: 'Alice Liddell', email: `${settings.demoUsername}@example.com`, gender: 'female' as const };
  const demoId = await seedUsers(state, users, demoUser);
  // The password is kept only as a bcrypt hash.
  await accounts.add(settings.demoUsername, settings.demoPassword, demoId.toString());

  const services: Services = {
    state,
    users,
    sessions: new SessionStore(state),
    accounts,
    counters: redis ? new RedisCounterStore({ client: redis }) : new MemoryCounterStore(),
    secrets: { partition: await sharedSecret(state, 'rate-limit-partition') },
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
