import type { Request } from 'express';
import { checkFunction, checkLog, checkOneOf, invalidOption, type OptionHints, readOptions } from '../config/options.js';
import { warnOnce } from '../config/warnings.js';
import { checkStore } from '../stores/check-store.js';
import type { CounterStore } from '../stores/counter-store.js';
import { MemoryCounterStore } from '../stores/memory-counter-store.js';
import { type OrderedCounter, orderedCounter } from '../stores/ordered-count.js';
import { clientAddressKey } from './client-address.js';
import { type IdentifyRequest, identifyRequest } from './identity.js';
import { checkPolicy, type KeyedLimiter, keyedLimiter } from './limiter.js';
import { type PartitionHasher, type PartitionSecret, partitionHasher } from './partition.js';

/**
 * Default quota: `RATE_LIMIT` of the reference server's contract ("`100`,
 * `60`: requests per window (seconds), counted per user and per
 * application"). the conventions: "Quota values, windows and which endpoints they
 * apply to: not shown."
 */
export const DEFAULT_RATE_LIMIT = 100;
/** Default window in seconds: `RATE_WINDOW` of the reference server's contract. */
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
/** Default policy names, one per counted party (the conventions' Limits rule 4). */
export const DEFAULT_USER_POLICY = 'user';
export const DEFAULT_APPLICATION_POLICY = 'application';

/** What to do when the store cannot be reached. */
export const STORE_FAILURE_MODES = ['open', 'closed'] as const;
export type StoreFailureMode = (typeof STORE_FAILURE_MODES)[number];

/** One policy of rateLimit(). */
export interface RateLimitPolicyOptions {
  /** Name shown in the headers. Default: `"user"` for `user`, `"application"` for `application`. */
  name?: string;
  /** The quota `q`. Default: the limiter's `limit`. */
  limit?: number;
  /** The window `w`, in seconds. Default: the limiter's `windowSeconds`. */
  windowSeconds?: number;
}

export interface RateLimitOptions {
  /** Requests allowed per window, for each policy that does not set its own. Default: `100`. */
  limit?: number;
  /** The window, in seconds, for each policy that does not set its own. Default: `60`. */
  windowSeconds?: number;
  /**
   * The per-user policy: counts the request's user, or its client address
   * when anonymous. `false` leaves it out. Default: `{ name: "user" }`.
   */
  user?: RateLimitPolicyOptions | false;
  /**
   * The per-application policy: counts the request's authenticated client,
   * or its client address when no client is authenticated. `false` leaves
   * it out. Default: `{ name: "application" }`.
   */
  application?: RateLimitPolicyOptions | false;
  /** Where counts live; a RedisCounterStore shares them between instances. Default: a new `MemoryCounterStore`. */
  store?: CounterStore;
  /**
   * Who a request acts for; it may return a promise (a session lookup).
   * Default: `identifyRequest`: `req.auth.subject` as the user, and
   * `req.auth.clientId` or `req.verifiedClient.id` (verified client credentials)
   * as the application. Nothing the client merely claims is trusted.
   */
  identify?: IdentifyRequest;
  /**
   * The client address an anonymous request is counted by. Default:
   * `req.ip` through express-rate-limit's `ipKeyGenerator` (an IPv6 address
   * counts by its /56 subnet). Set Express's `trust proxy` behind a proxy.
   */
  address?: (req: Request) => string;
  /**
   * Requests that are not counted and carry no rate-limit headers: those
   * outside the API when the preset runs app-wide (a health check, static
   * files, HTML pages), e.g. `(req) => !req.path.startsWith('/api/')`.
   * Default: none, every request that reaches the limiter is counted.
   */
  skip?: (req: Request) => boolean;
  /**
   * When the store fails (Redis unreachable or too slow): `"closed"` answers
   * 503 `stateStoreUnavailable`; `"open"` lets the request through uncounted.
   * Default: `"closed"`.
   */
  storeFailure?: StoreFailureMode;
  /** Told of every store failure; `false` turns logging off. Default: one JSON line on stderr. */
  log?: ((error: unknown) => void) | false;
  /**
   * Secret of the keyed hash written as `pk`. Default: a random secret of
   * this process; give every instance the same one so that their `pk` agree.
   */
  partitionSecret?: PartitionSecret;
}

const OPTION_NAMES = [
  'limit',
  'windowSeconds',
  'user',
  'application',
  'store',
  'identify',
  'address',
  'storeFailure',
  'log',
  'partitionSecret',
  'skip',
] as const;
const POLICY_OPTION_NAMES = ['name', 'limit', 'windowSeconds'] as const;
const FACTORY = 'rateLimit';

/**
 * What rateLimit() answers to an old name of its options and to the names
 * express-rate-limit users bring (docs/coming-from-helmet-cors-express-rate-limit.md).
 */
export const RATE_LIMIT_HINTS: OptionHints = {
  onStoreError: 'It is now `log` (a function, or `false` for no log).',
  max: "express-rate-limit's `max` is `limit` here: requests allowed per window.",
  windowMs: "express-rate-limit's `windowMs` is `windowSeconds` here, in seconds (60000 ms is `windowSeconds: 60`).",
  keyGenerator:
    "express-rate-limit's `keyGenerator` is `identify` here (returns `{ user, application }`, who the request acts for), with `address` for the client address an anonymous request is counted by.",
  message:
    'There is no `message`: a refusal is the conventions\' 429 `{"errors":[{"message","code":42900}]}`, rendered by errorHandler() when one is mounted, else by rateLimit() itself.',
  handler:
    'There is no `handler`: the 429 goes to errorHandler() through next() when it is mounted, else rateLimit() answers it in JSON itself.',
  statusCode: 'There is no `statusCode`: a refusal is always 429 (docs/conventions.md §12.1).',
  standardHeaders:
    'There is no `standardHeaders`: `RateLimit-Policy` and `RateLimit` (docs/conventions.md §12.2, §12.3) are always sent.',
  legacyHeaders: 'There is no `legacyHeaders`: the `X-RateLimit-*` headers are never sent (docs/conventions.md §12.5).',
  passOnStoreError: "express-rate-limit's `passOnStoreError: true` is `storeFailure: 'open'` here.",
};

/** The counted parties, in the order their policies are counted and listed. */
export type PolicyKind = 'user' | 'application';

/** rateLimit()'s options, checked, with their defaults. */
export interface RateLimitConfiguration {
  /** The policies, in order, each a limiter() over the one store. */
  readonly policies: readonly KeyedLimiter[];
  /** Which party each policy counts (same index as `policies`). */
  readonly kinds: readonly PolicyKind[];
  readonly identify: IdentifyRequest;
  readonly address: (req: Request) => string;
  readonly failOpen: boolean;
  /** Told of every store failure; undefined when logging is off. */
  readonly log: ((error: unknown) => void) | undefined;
  /** `pk` of an identity; one secret for every policy of the limiter. */
  readonly partitionKeyOf: PartitionHasher;
  /** Requests that are not counted (health checks, static files); undefined: every request is. */
  readonly skip: ((req: Request) => boolean) | undefined;
  /**
   * Counts a request's store keys in every policy in one exchange, when the
   * store can (RedisCounterStore); undefined: policy by policy.
   */
  readonly countInOrder: OrderedCounter | undefined;
}

const logStoreError = (error: unknown): void => {
  const cause = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`${JSON.stringify({ level: 'error', message: 'rate-limit store failed', cause })}\n`);
};

// Without Express's `trust proxy` (its default) req.ip is the connection's
// own address, whatever the headers say: worked out once per connection,
// not per request (proxy-addr, then the IPv6 test of ipKeyGenerator).
const addressBySocket = new WeakMap<object, string>();
const defaultAddress = (req: Request): string => {
  const socket = req.socket as object | undefined;
  if (socket === undefined || typeof req.app?.enabled !== 'function' || req.app.enabled('trust proxy'))
    return clientAddressKey(req);
  if (req.headers?.['x-forwarded-for'] !== undefined) warnOfUntrustedProxy();
  let address = addressBySocket.get(socket);
  if (address === undefined) {
    address = clientAddressKey(req);
    addressBySocket.set(socket, address);
  }
  return address;
};

/**
 * A proxy in front says who the client is, and Express is told not to
 * believe it: every client behind that proxy then shares one counter (the
 * fact express-rate-limit reports as ERR_ERL_UNEXPECTED_X_FORWARDED_FOR).
 * Said once per process, in production too: that is where the proxy is.
 */
function warnOfUntrustedProxy(): void {
  warnOnce(
    'rateLimit:x-forwarded-for',
    'EAC_UNTRUSTED_X_FORWARDED_FOR',
    "rateLimit() saw an X-Forwarded-For header while Express's `trust proxy` setting is off (its default): anonymous " +
      "requests are counted by the proxy's address, so every client behind it shares one counter. Behind a proxy or load " +
      "balancer, tell Express how many hops to trust (app.set('trust proxy', 1)); otherwise drop the header at the edge.",
    { evenInProduction: true },
  );
}

/** Turns rateLimit()'s options into its configuration, or throws a ConfigurationError at start-up. */
export function readRateLimitOptions(options: unknown): RateLimitConfiguration {
  const given = readOptions<RateLimitOptions>(FACTORY, options, OPTION_NAMES, RATE_LIMIT_HINTS);
  const defaults = {
    limit: given.limit ?? DEFAULT_RATE_LIMIT,
    windowSeconds: given.windowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS,
  };
  checkPolicy(FACTORY, '', { name: DEFAULT_USER_POLICY, ...defaults });
  const store = given.store === undefined ? new MemoryCounterStore() : checkStore(FACTORY, given.store);
  const partitionKeyOf = partitionHasher(given.partitionSecret);

  const kinds: PolicyKind[] = [];
  const policies: KeyedLimiter[] = [];
  for (const kind of ['user', 'application'] as const) {
    const option = given[kind] ?? {};
    if (option === false) continue;
    const policyOptions = readOptions<RateLimitPolicyOptions>(`${FACTORY}.${kind}`, option, POLICY_OPTION_NAMES);
    const defaultName = kind === 'user' ? DEFAULT_USER_POLICY : DEFAULT_APPLICATION_POLICY;
    const policy = checkPolicy(FACTORY, `${kind}.`, { name: defaultName, ...defaults, ...policyOptions });
    if (policies.some((other) => other.name === policy.name)) {
      invalidOption(FACTORY, `${kind}.name`, policy.name, 'a name no other policy of this limiter has');
    }
    kinds.push(kind);
    policies.push(keyedLimiter(policy, store, partitionKeyOf));
  }
  if (policies.length === 0) {
    invalidOption(FACTORY, 'user', given.user, 'a policy when `application` is `false` (one policy at least)');
  }

  return {
    policies,
    kinds,
    identify:
      given.identify === undefined ? identifyRequest : checkFunction<IdentifyRequest>(FACTORY, 'identify', given.identify),
    address:
      given.address === undefined ? defaultAddress : checkFunction<(req: Request) => string>(FACTORY, 'address', given.address),
    failOpen: checkOneOf(FACTORY, 'storeFailure', given.storeFailure ?? 'closed', STORE_FAILURE_MODES) === 'open',
    log: checkLog<(error: unknown) => void>(FACTORY, given.log, logStoreError),
    partitionKeyOf,
    skip: given.skip === undefined ? undefined : checkFunction<(req: Request) => boolean>(FACTORY, 'skip', given.skip),
    countInOrder: orderedCounter(
      store,
      policies.map((policy) => ({ windowMs: policy.windowSeconds * 1000, limit: policy.limit })),
    ),
  };
}
