export { type IdPair, idPair } from './ids.js';
export {
  JSON_CONTENT_TYPE,
  type JsonResponsesOptions,
  jsonResponses,
  sendJson,
  sendJsonText,
} from './json-responses.js';
export { JsonInteger, stringifyJson } from './serialize.js';
