import { RedisClientStore, RedisRefreshTokenStore, RedisUserStore } from '../src/index.js';

/**
 * `redis` is an optional peer dependency of the library this package builds
 * on: each Redis store of this package, given no client, says at start-up to
 * install the package and create one, as the library's own stores do.
 */
describe.each([
  ['RedisUserStore', (options: never) => new RedisUserStore(options)],
  ['RedisClientStore', (options: never) => new RedisClientStore(options)],
  ['RedisRefreshTokenStore', (options: never) => new RedisRefreshTokenStore(options)],
])('%s without a client', (name, create) => {
  it('says to install redis and create a client', () => {
    expect(() => create({} as never)).toThrow(
      `${name}(options): \`client\` must be a connected node-redis v6 client: install the \`redis\` package (\`npm install redis\`), create one with its createClient() or createCluster(), call connect() and pass it as \`client\`; received undefined.`,
    );
  });
});
