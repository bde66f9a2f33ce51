export { ConfigurationError, type ConfigurationErrorCode } from 'express-api-conventions';
export {
  type CheckDefinition,
  type CheckId,
  CONFORMANCE_CHECK_IDS,
  CONFORMANCE_CHECKS,
  CONFORMANCE_SECTIONS,
  type ConformanceSection,
} from './catalogue.js';
export { type Cause, type CauseId, CHECK_TRIAGE, CONFORMANCE_CAUSES, SEVERITIES, type Severity } from './causes.js';
export { type ConformanceTarget, checkConventions } from './check-conventions.js';
export {
  type BaselineEntry,
  type ConformanceBaseline,
  readBaseline,
  type Suppression,
  updatedBaseline,
} from './gate.js';
export { formatHtml } from './html.js';
export type { ConformanceChange, ConformanceCredentials, ConformanceOptions, ConformancePhase } from './options.js';
export { CONFORMANCE_DEFAULT_REQUESTS, CONFORMANCE_REQUEST_CAP } from './probe.js';
export {
  type CauseGroup,
  type CheckEvidence,
  type CheckOutcome,
  type CheckResult,
  type CheckStatus,
  type ConformanceReport,
  type ExchangeRecord,
  formatJunit,
  formatReport,
} from './report.js';
export { formatSarif, type SarifOptions } from './sarif.js';
