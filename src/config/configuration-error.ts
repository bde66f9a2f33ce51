/**
 * Thrown by a middleware factory when its options are wrong. It is raised at
 * start-up, when the factory is called, never at request time (DESIGN.md
 * principle 3). Each code has an anchor in docs/configuration-errors.md, a page
 * the package ships, so the path in the message exists in the user's
 * node_modules.
 */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  readonly code: ConfigurationErrorCode;

  constructor(code: ConfigurationErrorCode, message: string) {
    super(`${message} [${code}: see node_modules/express-api-conventions/docs/configuration-errors.md#${code.toLowerCase()}]`);
    this.code = code;
  }
}

/** Stable codes of configuration errors. */
export const CONFIGURATION_ERROR_CODES = [
  'EAC_OPTIONS_NOT_OBJECT',
  'EAC_OPTION_UNKNOWN',
  'EAC_OPTION_INVALID',
  'EAC_OPTIONS_CONFLICT',
  'EAC_FACTORY_NOT_CALLED',
] as const;

export type ConfigurationErrorCode = (typeof CONFIGURATION_ERROR_CODES)[number];
