import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ConfigurationError } from '../config/index.js';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent } from '../events/index.js';
import { knownSecuritySeries } from './security-series.js';

/** The instrumentation scope the instruments belong to. */
export const SECURITY_METRICS_METER = 'express-api-conventions';

/**
 * The instruments' names, after OpenTelemetry's naming guidance: a namespace
 * of the library, dots between levels, a plural for a count of discrete
 * things (no `_total`), the unit in the instrument's unit, not its name.
 */
export const SECURITY_METRICS = {
  events: 'express_api_conventions.security.events',
  signInDuration: 'express_api_conventions.sign_in.duration',
  passwordPoolWait: 'express_api_conventions.password_pool.wait_time',
} as const;

// Seconds; the buckets OpenTelemetry advises for http.server.request.duration,
// which cover a password hash (tens to hundreds of milliseconds) and a queue.
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

// The parts of `@opentelemetry/api` used here, by their shape: the package's
// declarations then name nothing of the optional peer, and compile without it.
type Attributes = Record<string, string | number | undefined>;
interface InstrumentOptions {
  readonly description?: string;
  readonly unit?: string;
  readonly advice?: { readonly explicitBucketBoundaries?: number[] };
}
interface Meter {
  createCounter(name: string, options?: InstrumentOptions): { add(value: number, attributes?: Attributes): void };
  createHistogram(name: string, options?: InstrumentOptions): { record(value: number, attributes?: Attributes): void };
}
interface MeterProvider {
  getMeter(name: string): Meter;
}

export interface SecurityMetricsOptions {
  /** The meter to record with; by default one of `meterProvider`. */
  readonly meter?: Meter;
  /** By default the global one (`metrics.getMeterProvider()`), which the OpenTelemetry SDK sets. */
  readonly meterProvider?: MeterProvider;
}

/**
 * The global meter provider, the one the OpenTelemetry SDK registers.
 * `@opentelemetry/api` is an optional peer dependency, loaded here, when
 * first needed: the subpath loads without it, and a meter or provider given
 * needs nothing of it at run time.
 */
function globalMeterProvider(): MeterProvider {
  try {
    return (require('@opentelemetry/api') as typeof import('@opentelemetry/api')).metrics.getMeterProvider();
  } catch (error) {
    if (!/Cannot find module '@opentelemetry\/api'/.test((error as Error).message)) throw error;
    throw new ConfigurationError(
      'EAC_PEER_MISSING',
      "recordSecurityMetrics(): the global meter provider is `@opentelemetry/api`'s (an optional peer dependency), and it is not installed: `npm install @opentelemetry/api` with an OpenTelemetry SDK, or pass a `meter` or `meterProvider`.",
    );
  }
}

/**
 * Subscribes to the security-event channel and records every event as
 * OpenTelemetry metrics: a count of events by name, outcome, rule and level,
 * the sign-ins' durations and the password pool's waits
 * (docs/observability.md, "OpenTelemetry"). Every series of the events the
 * library knows is created at 0 when it starts. Returns the function that
 * unsubscribes; until it is called, events are built on every decision.
 */
export function recordSecurityMetrics(options: SecurityMetricsOptions = {}): () => void {
  const meter = options.meter ?? (options.meterProvider ?? globalMeterProvider()).getMeter(SECURITY_METRICS_METER);
  const events = meter.createCounter(SECURITY_METRICS.events, {
    description: 'Security decisions published on the express-api-conventions:security channel.',
    unit: '{event}',
  });
  // Each known series at 0 from the start: the first incident after a
  // restart is then an increase that rate() and increase() see.
  for (const series of knownSecuritySeries()) events.add(0, { ...series });
  const signIns = meter.createHistogram(SECURITY_METRICS.signInDuration, {
    description: 'Duration of sign-ins, the password check included.',
    unit: 's',
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
  });
  const poolWaits = meter.createHistogram(SECURITY_METRICS.passwordPoolWait, {
    description: 'Time a password check waited for the hashing pool.',
    unit: 's',
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
  });

  const record = (message: unknown): void => {
    const event = message as SecurityEvent;
    const attributes: Attributes = { event: event.event, outcome: event.outcome, level: event.level };
    if (event.rule !== undefined) attributes.rule = event.rule;
    events.add(1, attributes);
    const outcome = { event: event.event, outcome: event.outcome };
    if (typeof event.durationMs === 'number') signIns.record(event.durationMs / 1000, outcome);
    if (typeof event.poolWaitMs === 'number') poolWaits.record(event.poolWaitMs / 1000, outcome);
  };
  subscribe(SECURITY_EVENTS_CHANNEL, record);
  return () => {
    unsubscribe(SECURITY_EVENTS_CHANNEL, record);
  };
}
