export { CONFIGURATION_ERROR_CODES, ConfigurationError, type ConfigurationErrorCode } from './configuration-error.js';
export {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkOneOf,
  checkString,
  invalidOption,
  isProductionEnvironment,
  readOptions,
} from './options.js';
