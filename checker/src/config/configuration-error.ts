/**
 * Thrown by checkConventions() and by the command's option reading when an
 * option is wrong, before any request is sent. The same class, codes and
 * message shape as the library's (src/config/configuration-error.ts): the
 * checker keeps its own copy so that it imports nothing of the library, and
 * test/config-agrees.test.ts holds the two to one shape. Only the page the
 * message points to differs: this package's README, which it ships.
 */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  readonly code: ConfigurationErrorCode;
  /**
   * The option the error is about, as the message names it (`maxRequests`,
   * `credentials.username`), so that the command can say it in its own terms
   * (it names its flag) without reading the message. Undefined when the error
   * is about the options as a whole.
   */
  declare readonly option?: string;
  /** What is wrong with `option`, the message's words after its name: "must be an integer from 1 to 200; received 0.". */
  declare readonly problem?: string;
  /** The message without the code and the documentation path at its end, for a caller that says those its own way. */
  readonly statement: string;

  constructor(code: ConfigurationErrorCode, message: string, about?: { readonly option: string; readonly problem: string }) {
    super(`${message} [${code}: see node_modules/express-api-conventions-checker/README.md#${code.toLowerCase()}]`);
    this.code = code;
    this.statement = message;
    if (about) {
      this.option = about.option;
      this.problem = about.problem;
    }
  }
}

/** Stable codes of the checker's configuration errors: the library's codes that reading options can raise. */
export const CONFIGURATION_ERROR_CODES = ['EAC_OPTIONS_NOT_OBJECT', 'EAC_OPTION_UNKNOWN', 'EAC_OPTION_INVALID'] as const;

export type ConfigurationErrorCode = (typeof CONFIGURATION_ERROR_CODES)[number];
