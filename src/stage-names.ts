/**
 * The preset's stage table: the stages in the order they run, each with
 * whether it runs when its option is not given, in a file that loads
 * nothing. conventions() adds each stage's factory and its reasons
 * (src/preset.ts), and express-api-conventions/openapi reads conventions()'s
 * options by these names and defaults without loading a middleware.
 */

/** Whether a stage runs when its option is not given. */
export type StageDefault = 'on' | 'off' | 'outside production';

/** The stages, in the order they run: each name is the factory the stage calls and its option key in conventions(). */
export const STAGE_TABLE = [
  { name: 'tokenEndpointErrors', default: 'off' },
  { name: 'commonHeaders', default: 'on' },
  { name: 'securityHeaders', default: 'on' },
  { name: 'caching', default: 'on' },
  { name: 'corsPolicy', default: 'off' },
  { name: 'secureCookies', default: 'on' },
  { name: 'jsonResponses', default: 'on' },
  { name: 'maintenance', default: 'off' },
  { name: 'bearerAuth', default: 'off' },
  { name: 'rateLimit', default: 'on' },
  { name: 'crossSiteProtection', default: 'on' },
  { name: 'parseBodies', default: 'on' },
  { name: 'methodOverride', default: 'on' },
  { name: 'csrfProtection', default: 'off' },
  { name: 'responseLinter', default: 'outside production' },
  { name: 'tokenRouter', default: 'off' },
] as const satisfies readonly { readonly name: string; readonly default: StageDefault }[];

type NamesOf<Rows> = { readonly [Index in keyof Rows]: Rows[Index] extends { readonly name: infer Name } ? Name : never };

/** The stage names, in the order they run (the table's first column). */
export const STAGE_NAMES = STAGE_TABLE.map((row) => row.name) as unknown as NamesOf<typeof STAGE_TABLE>;

/** The name of a stage: the factory it calls and its option key. */
export type StageName = (typeof STAGE_NAMES)[number];

/** Each stage's default, by name. */
export const STAGE_DEFAULTS: Readonly<Record<StageName, StageDefault>> = Object.fromEntries(
  STAGE_TABLE.map((row) => [row.name, row.default]),
) as Record<StageName, StageDefault>;

/**
 * Whether a stage is on for its option as written, production aside:
 * `false` is off, absent is the table's default, anything else is on.
 */
export function stageGiven(name: StageName, option: unknown): boolean {
  if (option === false) return false;
  return option !== undefined || STAGE_DEFAULTS[name] !== 'off';
}

/** conventions()'s option keys: one per stage, then the insertion points, report-only and the dictionary switch. */
export const CONVENTIONS_OPTION_NAMES = [...STAGE_NAMES, 'before', 'after', 'reportOnly', 'dictionaryMode'] as const;
