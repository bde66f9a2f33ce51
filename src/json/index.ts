export { JsonInteger, stringifyJson } from '../http/json-output/serialize.js';
export { type IdPair, idPair } from './ids.js';
export { type JsonResponsesOptions, jsonResponses, sendJson, sendJsonText } from './json-responses.js';
