export { appendRateLimitHeaders, type PolicyDescription, type QuotaUnit } from './headers.js';
export { type IdentifyRequest, identifyRequest, type RequestIdentity } from './identity.js';
export {
  type Limiter,
  type LimiterOptions,
  type LimitState,
  limiter,
  type TooManyRequestsInit,
  tooManyRequests,
} from './limiter.js';
export type { RateLimitOptions, RateLimitPolicyOptions, StoreFailureMode } from './options.js';
export type { PartitionSecret } from './partition.js';
export { rateLimit } from './rate-limit.js';
