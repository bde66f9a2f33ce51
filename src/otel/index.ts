export {
  recordSecurityMetrics,
  SECURITY_METRICS,
  SECURITY_METRICS_METER,
  type SecurityMetricsOptions,
} from './security-metrics.js';
