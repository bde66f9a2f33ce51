export { type CheckDefinition, type CheckId, CONFORMANCE_CHECK_IDS, CONFORMANCE_CHECKS } from './catalogue.js';
export { type ConformanceTarget, checkConventions } from './check-conventions.js';
export type { ConformanceChange, ConformanceCredentials, ConformanceOptions, ConformancePhase } from './options.js';
export { CONFORMANCE_DEFAULT_REQUESTS, CONFORMANCE_REQUEST_CAP } from './probe.js';
export {
  type CheckEvidence,
  type CheckResult,
  type CheckStatus,
  CONFORMANCE_SECTIONS,
  type ConformanceReport,
  type ConformanceSection,
  formatJunit,
  formatReport,
} from './report.js';
