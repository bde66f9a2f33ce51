import { createHash } from 'node:crypto';
import { type RedisConnection, type RedisStoreOptions, readRedisOptions, redisKey } from '../stores/redis/index.js';
import type { DpopReplayStore } from './dpop.js';
import { DEFAULT_OAUTH2_REDIS_PREFIX } from './redis-revoked-families.js';

/**
 * DPoP proof ids in Redis, so that a proof accepted by one instance is
 * refused by all (RFC 9449 §11.1): one `SET key 1 NX PXAT <end>` per proof,
 * atomic, each key gone when the proof could no longer be accepted anyway.
 * The key is a SHA-256 of the key thumbprint and the `jti`, so its length
 * does not depend on what the client sent.
 */
export class RedisDpopReplayStore implements DpopReplayStore {
  readonly #redis: RedisConnection;

  constructor(options: Readonly<RedisStoreOptions>) {
    this.#redis = readRedisOptions('RedisDpopReplayStore', options, DEFAULT_OAUTH2_REDIS_PREFIX).connection;
  }

  async remember(key: string, expiresAtMs: number): Promise<boolean> {
    const redis = this.#key(key);
    const reply = await this.#redis.send(redis, ['SET', redis, '1', 'NX', 'PXAT', String(Math.ceil(expiresAtMs))]);
    return reply !== null && reply !== undefined;
  }

  async forget(key: string): Promise<void> {
    const redis = this.#key(key);
    await this.#redis.send(redis, ['DEL', redis]);
  }

  #key(key: string): string {
    return redisKey(this.#redis.prefix, 'dpop', createHash('sha256').update(key).digest('base64url'));
  }
}
