/**
 * Thrown by a middleware factory when its options are wrong. It is raised at
 * start-up, when the factory is called, never at request time (docs/design.md
 * principle 3). Each code has an anchor in docs/configuration-errors.md; the
 * message links it by its address in the repository (the package ships no
 * docs/). The checker's option errors are these too: it reads them and
 * the option helpers through express-api-conventions/extend.
 */
/** docs/configuration-errors.md in the repository (package.json `homepage`). */
const CONFIGURATION_ERRORS_PAGE =
  'https://github.com/express-api-conventions/express-api-conventions/blob/main/docs/configuration-errors.md';

export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  readonly code: ConfigurationErrorCode;
  /**
   * The option the error is about, as the message names it (`maxRequests`,
   * `paths[0]`, `credentials.username`), so that a caller can say it in its own
   * terms (a command line names its flag) without reading the message.
   * Undefined when the error is about the options as a whole. Declared, not
   * defined, so an error about no one option carries no such key.
   */
  declare readonly option?: string;
  /** What is wrong with `option`, the message's words after its name: "must be an integer from 1 to 200; received 0.". */
  declare readonly problem?: string;
  /** The message without the code and the documentation path at its end, for a caller that says those its own way. */
  readonly statement: string;

  constructor(code: ConfigurationErrorCode, message: string, about?: { readonly option: string; readonly problem: string }) {
    super(`${message} [${code}: see ${CONFIGURATION_ERRORS_PAGE}#${code.toLowerCase()}]`);
    this.code = code;
    this.statement = message;
    if (about) {
      this.option = about.option;
      this.problem = about.problem;
    }
  }
}

/** Stable codes of configuration errors. */
export const CONFIGURATION_ERROR_CODES = [
  'EAC_OPTIONS_NOT_OBJECT',
  'EAC_OPTION_UNKNOWN',
  'EAC_OPTION_INVALID',
  'EAC_OPTIONS_CONFLICT',
  'EAC_FACTORY_NOT_CALLED',
  'EAC_PEER_MISSING',
] as const;

export type ConfigurationErrorCode = (typeof CONFIGURATION_ERROR_CODES)[number];
