/**
 * The preset's stage names, in the order they run, in a file that loads
 * nothing: conventions() builds its table (src/preset.ts) under these names,
 * and express-api-conventions/openapi reads conventions()'s options by them
 * without loading a middleware.
 */

/** The stage names, in the order they run: each is the factory the stage calls and its option key in conventions(). */
export const STAGE_NAMES = [
  'tokenEndpointErrors',
  'commonHeaders',
  'securityHeaders',
  'caching',
  'corsPolicy',
  'secureCookies',
  'jsonResponses',
  'maintenance',
  'bearerAuth',
  'rateLimit',
  'crossSiteProtection',
  'parseBodies',
  'methodOverride',
  'csrfProtection',
  'responseLinter',
  'tokenRouter',
] as const;

/** The name of a stage: the factory it calls and its option key. */
export type StageName = (typeof STAGE_NAMES)[number];

/** conventions()'s option keys: one per stage, then the insertion points, report-only and the dictionary switch. */
export const CONVENTIONS_OPTION_NAMES = [...STAGE_NAMES, 'before', 'after', 'reportOnly', 'dictionaryMode'] as const;
