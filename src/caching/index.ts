export {
  CACHE_CONTROL_NO_CACHE,
  CACHE_CONTROL_NO_STORE,
  CACHE_CONTROL_SENSITIVE,
  type CacheIntent,
  type CachingOptions,
  cacheControl,
  caching,
  setCacheControl,
  varyOn,
} from './cache-control.js';
export { conditionalGetStep, isFresh } from './conditional-get.js';
export {
  bodyEntityTag,
  type EntityTagMode,
  type EntityTagOptions,
  entityTag,
  httpDate,
  isEntityTag,
  notModified,
  setValidators,
  type Validators,
} from './entity-tag.js';
export {
  checkPreconditions,
  listMatches,
  type PreconditionCheckOptions,
  type PreconditionsOptions,
  preconditions,
} from './preconditions.js';
