export { type CacheIntent, type CachingOptions, cacheControl, caching, setCacheControl, varyOn } from './cache-control.js';
export {
  type EntityTagMode,
  type EntityTagOptions,
  entityTag,
  notModified,
  setValidators,
  type Validators,
} from './entity-tag.js';
export {
  checkPreconditions,
  type PreconditionCheckOptions,
  type PreconditionsOptions,
  preconditions,
} from './preconditions.js';
