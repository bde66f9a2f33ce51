import { RedisCounterStore } from '../../src/stores/index.js';

/**
 * `redis` is an optional peer dependency: an app
 * that uses a Redis store without a client is told, at start-up, to install
 * the package and create one, whichever store it is (the authorization
 * server's stores: authorization-server/test/redis-client-required.test.ts).
 */
describe.each([['RedisCounterStore', (options: never) => new RedisCounterStore(options)]])(
  '%s without a client',
  (name, create) => {
    it('says to install redis and create a client', () => {
      expect(() => create({} as never)).toThrow(
        `${name}(options): \`client\` must be a connected node-redis v6 client: install the \`redis\` package (\`npm install redis\`), create one with its createClient() or createCluster(), call connect() and pass it as \`client\`; received undefined.`,
      );
    });
  },
);
