export { CONFIGURATION_ERROR_CODES, ConfigurationError, type ConfigurationErrorCode } from './configuration-error.js';
export {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkLog,
  checkOneOf,
  checkString,
  invalidOption,
  isProductionEnvironment,
  type OptionHints,
  readOptions,
  refuseHintedOptions,
} from './options.js';
export { type LibraryWarning, setWarningHandler, type WarningHandler } from './warnings.js';
