export {
  appendRateLimitHeaders,
  DEFAULT_QUOTA_UNIT,
  type PolicyDescription,
  policyItem,
  policyItemPrefix,
  QUOTA_UNITS,
  type QuotaUnit,
  quotedName,
  RATELIMIT_HEADER,
  RATELIMIT_POLICY_HEADER,
  stateItem,
} from './headers.js';
export { type IdentifyRequest, identifyRequest, type RequestIdentity } from './identity.js';
export {
  type Limiter,
  type LimiterOptions,
  type LimitState,
  limiter,
  type TooManyRequestsInit,
  type TooManyRequestsName,
  tooManyRequests,
} from './limiter.js';
export {
  DEFAULT_APPLICATION_POLICY,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RATE_WINDOW_SECONDS,
  DEFAULT_USER_POLICY,
  type RateLimitOptions,
  type RateLimitPolicyOptions,
  STORE_FAILURE_MODES,
  type StoreFailureMode,
} from './options.js';
export { PARTITION_KEY_BYTES, type PartitionSecret } from './partition.js';
export { rateLimit } from './rate-limit.js';
