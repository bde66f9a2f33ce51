import { createServer, type Server } from 'node:http';
import { type AddressInfo, Server as NetServer } from 'node:net';
import type { Express } from 'express';
import {
  MemoryDpopReplayStore,
  MemoryRevokedFamilies,
  RedisDpopReplayStore,
  RedisRevokedFamilies,
} from 'express-api-conventions/oauth2';
import { answerParserErrors, serverTimeouts } from 'express-api-conventions/security';
import { MemoryCounterStore, RedisCounterStore } from 'express-api-conventions/stores';
import {
  MemoryClientStore,
  MemoryCodeStore,
  MemoryConsentStore,
  MemoryRefreshTokenStore,
  MemorySessionStore,
  MemorySignInGuardStore,
  MemoryUserStore,
  RedisClientStore,
  RedisCodeStore,
  RedisConsentStore,
  RedisRefreshTokenStore,
  RedisSessionStore,
  RedisSignInGuardStore,
  RedisUserStore,
} from 'express-api-conventions-authorization-server';
import { createApp } from './app.js';
import { BROWSER_PAGE_CLIENT_ID } from './auth.js';
import { demoSeed } from './demo-seed.js';
import { logSecurityEvents } from './event-log.js';
import { agreeOnIssuer, ownAddress, republishIssuer } from './issuer.js';
import { MemoryState } from './memory-state.js';
import { agreeOnSecrets, differing, type PinnedSecrets, republishSecrets } from './secrets.js';
import type { Services } from './services.js';
import { readSettings, type Settings, StartupError } from './settings.js';
import { agreeOnSigningKey, republishSigningKey } from './signing-key.js';
import { connectRedis, connectRedisCluster, isCluster, type RedisClient, RedisState } from './state.js';
import { UserRepository } from './users/repository.js';

/** Every store the service shares between instances: in memory, or all of them in one Redis (or one Redis Cluster). */
function openStores(redis: RedisClient | undefined) {
  if (!redis) {
    return {
      state: new MemoryState(),
      accounts: new MemoryUserStore(),
      clients: new MemoryClientStore(),
      refreshTokens: new MemoryRefreshTokenStore(),
      revokedFamilies: new MemoryRevokedFamilies(),
      counters: new MemoryCounterStore(),
      signIns: new MemorySignInGuardStore(),
      sessions: new MemorySessionStore(),
      dpopReplay: new MemoryDpopReplayStore(),
      codes: new MemoryCodeStore(),
      consents: new MemoryConsentStore(),
    };
  }
  // Every library store bounds its commands (500 ms) and fails with
  // StoreUnavailableError, which the error model answers 503 with Retry-After.
  return {
    state: new RedisState(redis),
    accounts: new RedisUserStore({ client: redis }),
    clients: new RedisClientStore({ client: redis }),
    refreshTokens: new RedisRefreshTokenStore({ client: redis }),
    // Each instance keeps a local copy, refreshed every 250 ms: a revocation reaches all within a second.
    revokedFamilies: new RedisRevokedFamilies({ client: redis }),
    counters: new RedisCounterStore({ client: redis }),
    // The sign-in guard checks and counts each attempt in one script, whichever instance it reaches.
    signIns: new RedisSignInGuardStore({ client: redis }),
    // Browser sessions: each sign-in keeps its own, listed and ended from any instance.
    sessions: new RedisSessionStore({ client: redis }),
    // A DPoP proof accepted by one instance is refused by all.
    dpopReplay: new RedisDpopReplayStore({ client: redis }),
    // A code is redeemed once, whichever instance it reaches; a replay revokes what it issued everywhere.
    codes: new RedisCodeStore({ client: redis }),
    consents: new RedisConsentStore({ client: redis }),
  };
}

/**
 * After SIGTERM, how long connections that are open but idle stay open: a
 * request a keep-alive client sent on one just as the signal came is still
 * answered (with `Connection: close`) instead of meeting a reset.
 */
const SHUTDOWN_GRACE_MS = 1000;

/** Listens on HOST:PORT; a port in use is a clear start-up error, not a crash. */
function listen(server: Server, settings: Settings): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const where = `${settings.host}:${settings.port}`;
      if (error.code === 'EADDRINUSE') {
        reject(new StartupError(`${where} is already in use by another process: stop it, or set PORT (or HOST) to a free one`));
      } else if (error.code === 'EACCES') {
        reject(new StartupError(`not allowed to listen on ${where}: set PORT to one above 1023`));
      } else {
        reject(new StartupError(`cannot listen on ${where}: ${error.message}`));
      }
    };
    server.once('error', failed);
    server.listen(settings.port, settings.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** The app serving now, and what it was made of: both replaced when the instances' shared values change. */
interface Running {
  services: Services;
  app: Express;
}

/**
 * What to do when Redis comes back after an outage: restore the demo data and,
 * if another instance started meanwhile and drew its own secrets, signing key
 * or issuer, adopt them, so that all instances agree again (tokens this one
 * signed before are refused).
 */
function adoptOnReconnect(settings: Settings, running: Running, seed: () => Promise<void>, pinned: PinnedSecrets) {
  return async function afterReconnect(): Promise<void> {
    try {
      await seed();
      const { services } = running;
      const issuer = await republishIssuer(services.state, settings, services.issuer);
      const published = await republishSecrets(services.state, services.secrets, pinned);
      const signingKey = await republishSigningKey(services.state, settings.accessTokenAlg, services.signingKey);
      const changed: string[] = differing(services.secrets, published);
      if (signingKey !== services.signingKey) changed.push('access-token signing key');
      const issuerChanged = issuer !== services.issuer;
      if (changed.length === 0 && !issuerChanged) return;
      running.services = { ...services, secrets: published, issuer, signingKey };
      running.app = createApp(settings, running.services);
      if (changed.length > 0) {
        console.warn(`reference server: adopted the ${changed.join(', ')} secret(s) published while Redis was away`);
      }
      if (issuerChanged) console.warn(`reference server: adopted the issuer ${issuer} published while Redis was away`);
    } catch (error) {
      process.stderr.write(`redis: after reconnecting: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  };
}

/** Listens, says where, and on SIGTERM (or SIGINT) stops accepting, finishes the requests in flight and exits 0. */
async function serve(settings: Settings, running: Running, redis: RedisClient | undefined): Promise<void> {
  let stopping = false;
  const server = createServer((req, res) => {
    // Once stopping, each answer closes its connection, so a keep-alive client
    // sends its next request elsewhere rather than on a connection about to end.
    if (stopping) res.setHeader('Connection', 'close');
    running.app(req, res);
  });
  // What Node's HTTP parser refuses before Express sees it (431, 400, 408) is
  // answered in the JSON error shape with the security headers too.
  answerParserErrors(server, { production: settings.production });
  // A client that trickles or stalls its request line and headers is cut
  // (10 s, 30 s for the whole request); a slow body gets 408 from parseBodies().
  serverTimeouts(server);
  await listen(server, settings);
  const { port } = server.address() as AddressInfo;
  const state = redis === undefined ? 'state in memory' : isCluster(redis) ? 'state in a Redis Cluster' : 'state in Redis';
  console.log(`reference server listening on http://${settings.host}:${port} (${state})`);
  if (running.services.issuer !== ownAddress(settings)) console.log(`reference server: issuer ${running.services.issuer}`);
  if (!settings.production) {
    console.log(
      `reference server: the password grant is on for the first-party clients registered for it (${settings.demoClientId}, ${BROWSER_PAGE_CLIENT_ID}) because the conventions require it (docs/conventions.md rule 13.2); RFC 9700 §2.4 says it MUST NOT be used. ` +
        'Other clients use the authorization code flow with PKCE; see docs/oauth2-choices.md',
    );
  }

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`reference server: ${signal}: finishing requests in flight`);
    // Stops accepting now. http.Server.close() would also cut the idle
    // keep-alive connections at once, resetting a request a client sent on one
    // at that moment: net.Server's close leaves them to the grace period.
    NetServer.prototype.close.call(server, async () => {
      running.services.revokedFamilies.close();
      await redis?.close().catch(() => {});
      console.log('reference server: stopped');
      process.exit(0);
    });
    setTimeout(() => {
      server.closeIdleConnections();
      setInterval(() => server.closeIdleConnections(), 50).unref();
    }, SHUTDOWN_GRACE_MS).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/**
 * Starts the reference server: reads the settings, opens the shared state
 * (memory, or Redis with REDIS_URL or REDIS_CLUSTER), seeds the demo data, and serves.
 */
async function start(settings: Settings): Promise<void> {
  // Every security decision as one JSON line on standard error, unless LOG_EVENTS=0.
  if (settings.logEvents) logSecurityEvents(settings.instanceId);
  // Set once the stores exist: what to do when Redis comes back after an outage.
  let reconnected = () => {};
  const redis = settings.redisClusterUrls
    ? await connectRedisCluster(settings.redisClusterUrls, () => reconnected())
    : settings.redisUrl
      ? await connectRedis(settings.redisUrl, () => reconnected())
      : undefined;
  const stores = openStores(redis);
  const users = new UserRepository(stores.state);
  const seed = await demoSeed(settings, { ...stores, users });
  await seed();

  const pinned: PinnedSecrets = { token: settings.tokenSecret, csrf: settings.csrfSecret, partition: settings.partitionSecret };
  const services: Services = {
    ...stores,
    users,
    secrets: await agreeOnSecrets(stores.state, pinned),
    issuer: await agreeOnIssuer(stores.state, settings),
    signingKey: await agreeOnSigningKey(stores.state, settings.accessTokenAlg),
  };
  const running: Running = { services, app: createApp(settings, services) };
  reconnected = adoptOnReconnect(settings, running, seed, pinned);
  await serve(settings, running, redis);
}
try {
  await start(readSettings());
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`reference server: cannot start: ${message}`);
  if (!(error instanceof StartupError) && error instanceof Error && error.stack) console.error(error.stack);
  process.exit(1);
}
