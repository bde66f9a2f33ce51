// The peer stack (bench/apps/peer.mjs) with express-rate-limit's counters in
// Redis through rate-limit-redis, on the client of bench/lib/redis.mjs, as
// its readme wires node-redis (sendCommand, or sendCommandCluster on a cluster).
import { RedisStore } from 'rate-limit-redis';
import { connectRedis } from '../lib/redis.mjs';
import { createHandler as createApp } from './peer.mjs';

export async function createHandler(prefix = 'bench-peer:') {
  const client = await connectRedis();
  const store = process.env.BENCH_REDIS_CLUSTER
    ? new RedisStore({
        prefix,
        sendCommandCluster: ({ key, isReadOnly, command }) => client.sendCommand(key, isReadOnly, command),
      })
    : new RedisStore({ prefix, sendCommand: (...command) => client.sendCommand(command) });
  return createApp(store);
}
