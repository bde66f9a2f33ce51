import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit as expressRateLimit, ipKeyGenerator, type RateLimitInfo } from 'express-rate-limit';
import { checkFunction, checkOneOf, invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import type { CounterStore } from '../stores/counter-store.js';
import { MemoryCounterStore } from '../stores/memory-counter-store.js';
import { appendRateLimitHeaders, policyItem, policyItemPrefix, quotedName, stateItem } from './headers.js';
import { type IdentifyRequest, identifyRequest } from './identity.js';
import { checkPolicy, checkStore, secondsUntil } from './limiter.js';
import { type PartitionSecret, partitionHasher, storeKeyOf } from './partition.js';
import { CounterStoreAdapter, StoreFailure } from './store-adapter.js';

/**
 * Default quota: `RATE_LIMIT` of the reference server's contract ("`100`,
 * `60`: requests per window (seconds), counted per user and per
 * application"). SPEC.md: "Quota values, windows and which endpoints they
 * apply to: not shown."
 */
export const DEFAULT_RATE_LIMIT = 100;
/** Default window in seconds: `RATE_WINDOW` of the reference server's contract. */
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
/** Default policy names, one per counted party (SPEC.md Limits rule 4). */
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
   * The per-application policy: counts the request's client id, or its
   * client address when no client is known. `false` leaves it out.
   * Default: `{ name: "application" }`.
   */
  application?: RateLimitPolicyOptions | false;
  /** Where counts live; a RedisCounterStore shares them between instances. Default: a new `MemoryCounterStore`. */
  store?: CounterStore;
  /**
   * Who a request acts for. Default: `identifyRequest`: `req.auth.subject`
   * and `req.auth.clientId`, else the client id of HTTP Basic or of a parsed
   * form body's `client_id`.
   */
  identify?: IdentifyRequest;
  /**
   * The client address an anonymous request is counted by. Default:
   * `req.ip` through express-rate-limit's `ipKeyGenerator` (an IPv6 address
   * counts by its /56 subnet). Set Express's `trust proxy` behind a proxy.
   */
  address?: (req: Request) => string;
  /**
   * When the store fails (Redis unreachable or too slow): `"closed"` answers
   * 503 `stateStoreUnavailable`; `"open"` lets the request through uncounted.
   * Default: `"closed"`.
   */
  storeFailure?: StoreFailureMode;
  /** Told of every store failure. Default: one JSON line on stderr. */
  onStoreError?: (error: unknown) => void;
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
  'onStoreError',
  'partitionSecret',
] as const;
const POLICY_OPTION_NAMES = ['name', 'limit', 'windowSeconds'] as const;

const logStoreError = (error: unknown): void => {
  const cause = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`${JSON.stringify({ level: 'error', message: 'rate-limit store failed', cause })}\n`);
};

const defaultAddress = (req: Request): string => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? '');

// express-rate-limit leaves its result on the request under this name; the
// middleware reads it right after each policy ran.
const INFO_PROPERTY = 'eacRateLimit';
// The identities of the request, one per policy, read by each policy's key generator.
const IDENTITIES = Symbol('eac.rateLimit.identities');

type CountedRequest = Request & { [INFO_PROPERTY]?: RateLimitInfo; [IDENTITIES]?: string[] };

interface Policy {
  readonly quoted: string;
  readonly prefix: string;
  readonly counter: RequestHandler;
}

/**
 * Rate limits counted per user and per application (SPEC.md Limits rule 4),
 * each its own policy, both shown on every response that passes the limiter,
 * whatever its status, in `RateLimit-Policy` and `RateLimit` (SPEC.md
 * Limits "Signalling"). Over a limit: 429 through the error model, with
 * `Retry-After` at the instant of that policy's `t` (rule 2). The older
 * `X-RateLimit-*` headers are never sent (rule 3).
 *
 * express-rate-limit does the counting: key generation, the store calls,
 * the over-limit decision. Its own header writer is off: its draft-8 items
 * have no `qu`, hash `pk` without a key (an IPv4 address could be recovered
 * from it by trying them all) and are rebuilt on each request, and several
 * policies of one request must be written as one list; headers.ts does that.
 */
export function rateLimit(options?: Readonly<RateLimitOptions>): RequestHandler {
  const given = readOptions<RateLimitOptions>('rateLimit', options, OPTION_NAMES);
  const defaults = {
    limit: given.limit ?? DEFAULT_RATE_LIMIT,
    windowSeconds: given.windowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS,
  };
  checkPolicy('rateLimit', '', { name: DEFAULT_USER_POLICY, ...defaults });
  const store = given.store === undefined ? new MemoryCounterStore() : checkStore('rateLimit', given.store);
  const identify =
    given.identify === undefined ? identifyRequest : checkFunction<IdentifyRequest>('rateLimit', 'identify', given.identify);
  const address =
    given.address === undefined ? defaultAddress : checkFunction<(req: Request) => string>('rateLimit', 'address', given.address);
  const failOpen = checkOneOf('rateLimit', 'storeFailure', given.storeFailure ?? 'closed', STORE_FAILURE_MODES) === 'open';
  const onStoreError =
    given.onStoreError === undefined
      ? logStoreError
      : checkFunction<(error: unknown) => void>('rateLimit', 'onStoreError', given.onStoreError);
  const hash = partitionHasher(given.partitionSecret);

  const kinds: ('user' | 'application')[] = [];
  const policies: Policy[] = [];
  for (const kind of ['user', 'application'] as const) {
    const option = given[kind] ?? {};
    if (option === false) continue;
    const policyOptions = readOptions<RateLimitPolicyOptions>(`rateLimit.${kind}`, option, POLICY_OPTION_NAMES);
    const defaultName = kind === 'user' ? DEFAULT_USER_POLICY : DEFAULT_APPLICATION_POLICY;
    const policy = checkPolicy('rateLimit', `${kind}.`, { name: defaultName, ...defaults, ...policyOptions });
    if (policies.some((other) => other.quoted === quotedName(policy.name))) {
      invalidOption('rateLimit', `${kind}.name`, policy.name, 'a name no other policy of this limiter has');
    }
    const index = policies.length;
    const windowMs = policy.windowSeconds * 1000;
    const counter = expressRateLimit({
      windowMs,
      limit: policy.limit,
      store: new CounterStoreAdapter(store, windowMs, `${policy.name}:`),
      keyGenerator: (req) => storeKeyOf(policy.name, (req as CountedRequest)[IDENTITIES]?.[index] ?? ''),
      // Over the limit, the 429 is decided below, once every policy is counted.
      handler: (_req, _res, next) => next(),
      standardHeaders: false,
      legacyHeaders: false,
      passOnStoreError: false,
      requestPropertyName: INFO_PROPERTY,
    });
    kinds.push(kind);
    policies.push({ quoted: quotedName(policy.name), prefix: policyItemPrefix(policy), counter });
  }
  if (policies.length === 0) {
    invalidOption('rateLimit', 'user', given.user, 'a policy when `application` is `false` (one policy at least)');
  }
  const count = policies.length;

  // Writes both headers; then passes the request on, or answers 429, or 503
  // when the store failed and the limiter fails closed.
  function finish(
    req: CountedRequest,
    res: Response,
    next: NextFunction,
    infos: (RateLimitInfo | undefined)[],
    failure: StoreFailure | undefined,
  ): void {
    const identities = req[IDENTITIES] as string[];
    const now = Date.now();
    let policyHeader = '';
    let stateHeader = '';
    let retryAfter = -1;
    let pk = '';
    for (let i = 0; i < count; i++) {
      const policy = policies[i] as Policy;
      // Anonymous requests count both policies by one address: hash it once.
      if (i === 0 || identities[i] !== identities[i - 1]) pk = hash(identities[i] as string);
      policyHeader += (i === 0 ? '' : ', ') + policyItem(policy.prefix, pk);
      const info = infos[i];
      if (info === undefined) continue;
      const t = info.resetTime === undefined ? 0 : secondsUntil(info.resetTime.getTime(), now);
      stateHeader += (stateHeader === '' ? '' : ', ') + stateItem(policy.quoted, info.remaining, t, pk);
      if (info.used > info.limit && t > retryAfter) retryAfter = t;
    }
    appendRateLimitHeaders(res, policyHeader, stateHeader);
    if (failure !== undefined) {
      next(apiError('stateStoreUnavailable', { cause: failure.cause }));
      return;
    }
    if (retryAfter >= 0) {
      next(apiError('tooManyRequests', { headers: { 'Retry-After': String(retryAfter) } }));
      return;
    }
    next();
  }

  return function rateLimitMiddleware(req, res, next) {
    const counted = req as CountedRequest;
    const who = identify(req);
    let fallback: string | undefined;
    const identities: string[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const id = kinds[i] === 'user' ? who.user : who.application;
      if (id !== undefined && id !== '') {
        identities[i] = `${kinds[i]}:${id}`;
      } else {
        fallback ??= `address:${address(req)}`;
        identities[i] = fallback;
      }
    }
    counted[IDENTITIES] = identities;
    const infos: (RateLimitInfo | undefined)[] = new Array(count);
    let ran = 0;
    const step = (error?: unknown): void => {
      if (ran > 0) {
        if (error instanceof StoreFailure) {
          onStoreError(error.cause);
          if (!failOpen) {
            finish(counted, res, next, infos, error);
            return;
          }
        } else if (error !== undefined) {
          next(error);
          return;
        } else {
          infos[ran - 1] = counted[INFO_PROPERTY];
        }
      }
      if (ran < count) {
        counted[INFO_PROPERTY] = undefined;
        const policy = policies[ran++] as Policy;
        policy.counter(req, res, step);
        return;
      }
      finish(counted, res, next, infos, undefined);
    };
    step();
  };
}
