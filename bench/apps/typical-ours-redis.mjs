// bench/apps/ours-redis.mjs in the "typical app" set: behind morgan and cookie-parser (bench/lib/typical.mjs).
import { typical } from '../lib/typical.mjs';
import { createHandler as createApp } from './ours-redis.mjs';

export async function createHandler() {
  return typical(await createApp('bench-typical-ours:'));
}
