export { CHECK_IDS, CHECKS, type CheckDefinition, type CheckId } from './catalogue.js';
export { type ConformanceTarget, checkConventions } from './check-conventions.js';
export type { ConformanceCredentials, ConformanceOptions } from './options.js';
export { DEFAULT_MAX_REQUESTS, HARD_REQUEST_CAP } from './probe.js';
export {
  type CheckResult,
  type CheckStatus,
  type ConformanceReport,
  type Evidence,
  formatReport,
  SECTIONS,
  type Section,
} from './report.js';
