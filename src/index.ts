/**
 * express-api-conventions: Express middlewares that make a service follow
 * the API conventions written out in docs/conventions.md (every rule
 * numbered, shipped in the package). Each module is also published on its own subpath
 * (`express-api-conventions/errors`, `/json`, ...).
 */

export type { AuthContext } from './auth-context.js';
export * from './caching/index.js';
export * from './config/index.js';
export * from './cors/index.js';
export * from './errors/index.js';
export * from './json/index.js';
export * from './lint/index.js';
export * from './oauth2/index.js';
export {
  type ConventionsMiddleware,
  type ConventionsOptions,
  conventions,
  type Insertion,
  type Insertions,
  PRESET_STAGES,
  type PresetStage,
  STAGE_NAMES,
  type StageDefault,
  type StageName,
} from './preset.js';
export * from './rate-limit/index.js';
export * from './request/index.js';
export * from './security/index.js';
export * from './service/index.js';
export * from './stores/index.js';
