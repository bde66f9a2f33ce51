export { type ParseBodiesOptions, parseBodies } from './body-parsers.js';
export {
  METHOD_OVERRIDE_FIELD,
  METHOD_OVERRIDE_HEADER,
  type MethodOverrideOptions,
  methodOverride,
} from './method-override.js';
