export {
  CALLER_ALIASES,
  checkPath,
  DEFAULT_PATH_EXCEPTIONS,
  PATH_RULES,
  type PathExceptions,
  type PathRule,
  type PathRuleFinding,
  type PathVerdict,
  WELL_KNOWN_PREFIX,
} from './path-rules.js';
export {
  lintBody,
  PROTOCOL_KEYS,
  RESPONSE_RULES,
  type ResourceContext,
  type ResponseFinding,
  type ResponseLinterOptions,
  type ResponseLintReport,
  type ResponseRule,
  responseLinter,
} from './response-linter.js';
export {
  type CheckRoutesOptions,
  checkRoutes,
  DEFAULT_ROUTE_EXCEPTIONS,
  ROUTE_RULES,
  RouteConventionError,
  type RouteFinding,
  type RouteRule,
} from './route-linter.js';
