import { createClient, createCluster } from 'redis';
import type { RedisClient } from '../../src/stores/index.js';
import { type RedisCluster, type RedisServer, startRedis, startRedisCluster } from './services.js';

/** A client whose commands are recorded by name as they are sent: what `redis-cli MONITOR` would show. */
export function counted<T extends RedisClient>(client: T): { client: T; commands: string[] } {
  const commands: string[] = [];
  const proxy = new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'sendCommand' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        commands.push((args.find(Array.isArray) as string[])[0] as string);
        return value.apply(target, args);
      };
    },
  });
  return { client: proxy, commands };
}

type ClusterClient = ReturnType<typeof createCluster>;

/**
 * A real three-master Redis Cluster and a connected node-redis cluster
 * client for the describe block that calls it: started before its tests,
 * closed and stopped after them. Read `client` inside a test or hook.
 */
export function useRedisCluster(masters = 3): { readonly client: ClusterClient } {
  let nodes: RedisCluster | undefined;
  let cluster: ClusterClient | undefined;
  beforeAll(async () => {
    nodes = await startRedisCluster(masters);
    cluster = createCluster({ rootNodes: [...nodes.rootNodes] });
    cluster.on('error', () => undefined);
    await cluster.connect();
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
    await nodes?.stop();
  });
  return {
    get client(): ClusterClient {
      if (cluster === undefined) throw new Error('the Redis Cluster is not started yet: read `client` inside a test or hook');
      return cluster;
    },
  };
}

type SingleClient = ReturnType<typeof createClient>;

/**
 * A real Redis on a free port and a connected node-redis client for the
 * describe block that calls it: started before its tests, closed and
 * stopped after them. Read `client` inside a test or hook.
 */
export function useRedis(): { readonly client: SingleClient } {
  let redis: RedisServer | undefined;
  let client: SingleClient | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
  });
  afterAll(async () => {
    client?.destroy();
    await redis?.stop();
  });
  return {
    get client(): SingleClient {
      if (client === undefined) throw new Error('the Redis is not started yet: read `client` inside a test or hook');
      return client;
    },
  };
}
