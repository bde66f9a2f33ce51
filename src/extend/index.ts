/**
 * For packages that extend or judge the conventions, such as
 * express-api-conventions-authorization-server and
 * express-api-conventions-checker: the library's internal helpers and rule
 * tables they build on, so that they read options, refuse requests, write
 * JSON, reach Redis and judge paths, bodies and headers exactly as the
 * library does, without copies.
 * docs/extend.md names each export. An application has no need of them.
 */
export {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkString,
  didYouMean,
  invalidOption,
  isProductionEnvironment,
  type OptionHints,
  readOptions,
} from '../config/options.js';
export { warnOnce } from '../config/warnings.js';
export {
  type DescribedStage,
  type DocumentPart,
  type DocumentPartFromOptions,
  type DocumentTools,
  registerDocumentPart,
} from '../document-parts.js';
export { setErrorShape } from '../errors/error-shape.js';
export { noteSecurityEvent } from '../errors/refusal-events.js';
export { refuse } from '../errors/refuse.js';
export { type ErrorEntryRegistration, registerErrorEntries } from '../errors/registered-entries.js';
export { isStoreFailure } from '../errors/store-unavailable.js';
export { publishSecurityEvent, type SecurityEventFields, securityEventsWanted } from '../events/index.js';
export { writeJsonAnswer } from '../http/json-output/writer.js';
export { setResponseHeader } from '../http/response-headers.js';
export { CACHE_CONTROL_SENSITIVE, JSON_CONTENT_TYPE, TOKEN_FAILURE_PRAGMA } from '../http/spec.js';
export { resourceContextOf } from '../lint/body-rules.js';
export { inconsistentMessage, inconsistentNames, PATH_RULES, WELL_KNOWN_PREFIX } from '../lint/path-rules.js';
export { AccessTokenVerifier, TokenRejected } from '../oauth2/access-tokens.js';
export { parseBasicCredentials } from '../oauth2/basic-credentials.js';
export { checkAudience, checkRealm, checkSubjectActive } from '../oauth2/checks.js';
export { clientSecretMatches, hashClientSecret } from '../oauth2/clients.js';
export {
  type CheckedProof,
  DPOP_TOKEN_TYPE,
  DpopNonceRequired,
  DpopProofRejected,
  DpopVerifier,
  readDpopOptions,
} from '../oauth2/dpop.js';
export { type ReadyKey, readKeys } from '../oauth2/keys.js';
export { markOAuthEndpoint } from '../oauth2/oauth-endpoint-mark.js';
export { DEFAULT_OAUTH2_REDIS_PREFIX } from '../oauth2/redis-revoked-families.js';
export { checkScopeList, formatScope, parseScope } from '../oauth2/scope.js';
export { isObject as isJsonObject, resolve as resolveReference } from '../openapi/document.js';
export { clientAddressKey } from '../rate-limit/client-address.js';
export { fixedSecurityHeaders, SECURITY_HEADER_TABLE } from '../security/defaults.js';
export { RedisConnection, RedisScript, readRedisOptions, redisKey, replyText, taggedKey } from '../stores/redis/index.js';
