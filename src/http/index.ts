export {
  answerNotModified,
  type JsonWriteStep,
  setConditionalStep,
  setJsonObserver,
  writeJson,
  writeJsonAnswer,
} from './json-writer.js';
export { pathWithoutQuery } from './paths.js';
export { rawHttpResponse } from './raw-response.js';
export { JsonInteger, stringifyJson } from './serialize.js';
export {
  CACHE_CONTROL_NO_CACHE,
  CACHE_CONTROL_NO_STORE,
  CACHE_CONTROL_SENSITIVE,
  isSafeMethod,
  JSON_CONTENT_TYPE,
  NOSNIFF_HEADER,
  NOSNIFF_VALUE,
  SAFE_METHODS,
  TOKEN_FAILURE_CACHE_CONTROL,
  TOKEN_FAILURE_HEADERS,
  TOKEN_FAILURE_PRAGMA,
} from './spec.js';
