// Ours (bench/apps/ours.mjs) with the rate-limit counters in Redis:
// RedisCounterStore on the client of bench/lib/redis.mjs (BENCH_REDIS, or
// BENCH_REDIS_CLUSTER for a Redis Cluster). Every request counts both
// policies (user and application) in Redis.
import { loadLibrary } from '../lib/library.mjs';
import { BENCH_RATE_LIMIT } from '../lib/payload.mjs';
import { connectRedis } from '../lib/redis.mjs';
import { createHandler as createApp } from './ours.mjs';

export async function createHandler(prefix = 'bench-ours:') {
  const library = await loadLibrary();
  const store = new library.RedisCounterStore({ client: await connectRedis(), prefix });
  return createApp({ rateLimit: { limit: BENCH_RATE_LIMIT, store } }, library);
}
