export { DEFAULT_BODY_TIMEOUT_MS, type ParseBodiesOptions, parseBodies } from './body-parsers.js';
export {
  ALL_FIELDS,
  applySelection,
  FIELDS_PARAMETER,
  type FieldSelection,
  type SelectFieldsOptions,
  STRING_SIBLING_SUFFIX,
  selectFields,
  sendItem,
} from './fields.js';
export {
  METHOD_OVERRIDE_FIELD,
  METHOD_OVERRIDE_HEADER,
  type MethodOverrideOptions,
  methodOverride,
} from './method-override.js';
export {
  HAS_NEXT_KEY,
  LIMIT_PARAMETER,
  type ListPage,
  nextPageAddress,
  OFFSET_PARAMETER,
  type Page,
  type PagingOptions,
  pageOf,
  paging,
  sendList,
} from './paging.js';
export { FORBIDDEN_KEYS, type JsonSchema, type ValidateSchemas, validate } from './validate.js';
