// The serializer lives in the leaf layer (src/http/), beneath errors and every
// feature module; this path is kept so existing imports still compile.
export { JsonInteger, stringifyJson } from '../http/serialize.js';
