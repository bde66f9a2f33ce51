import { hashPassword, type MemoryClientStore, type MemoryUserStore } from 'express-api-conventions-authorization-server';
import { demoClients } from './clients.js';
import type { Settings } from './settings.js';
import type { SharedState } from './state.js';
import type { UserRepository } from './users/repository.js';
import { seedUsers } from './users/seed.js';

/** Where the demo data goes. */
export interface DemoStores {
  readonly state: SharedState;
  readonly users: UserRepository;
  /** The sign-in accounts (MemoryUserStore or RedisUserStore). */
  readonly accounts: Pick<MemoryUserStore, 'add'>;
  /** The registered clients (MemoryClientStore or RedisClientStore). */
  readonly clients: Pick<MemoryClientStore, 'add'>;
}

/**
 * The demo data of the contract: the users, the demo user (a user of the API
 * and an account that signs in) and the demo clients. Resolves to a step that
 * writes them, idempotent: run again when Redis comes back empty, it restores them.
 */
export async function demoSeed(settings: Settings, stores: DemoStores): Promise<() => Promise<void>> {
  const { state, users, accounts, clients } = stores;
  const demoUser = { name: 'Alice Liddell', email: `${settings.demoUsername}@example.com`, gender: 'female' as const };
  // The password is kept only as a bcrypt hash, made off the event loop, once.
  const passwordHash = await hashPassword(settings.demoPassword, { cost: settings.passwordCost });
  const registrations = demoClients(settings);
  return async function seedDemo() {
    const demoId = await seedUsers(state, users, demoUser);
    await accounts.add({ username: settings.demoUsername, subject: demoId.toString(), passwordHash });
    for (const client of registrations) await clients.add(client);
  };
}
