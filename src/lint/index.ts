export {
  type CheckRoutesOptions,
  checkRoutes,
  DEFAULT_ROUTE_EXCEPTIONS,
  ROUTE_RULES,
  RouteConventionError,
  type RouteFinding,
  type RouteRule,
} from './route-linter.js';
