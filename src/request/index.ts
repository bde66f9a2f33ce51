export { type ParseBodiesOptions, parseBodies } from './body-parsers.js';
export { type FieldSelection, type SelectFieldsOptions, selectFields, sendItem } from './fields.js';
export { type MethodOverrideOptions, methodOverride } from './method-override.js';
export { type ListPage, type Page, type PagingOptions, pageOf, paging, sendList } from './paging.js';
export { type JsonSchema, type ValidateSchemas, validate } from './validate.js';
