export { checkPath, type PathExceptions, type PathRule, type PathRuleFinding, type PathVerdict } from './path-rules.js';
export {
  lintBody,
  PROTOCOL_KEYS,
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
  RouteConventionError,
  type RouteFinding,
  type RouteRule,
} from './route-linter.js';
