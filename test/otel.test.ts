import { channel } from 'node:diagnostics_channel';
import { type Attributes, metrics } from '@opentelemetry/api';
import { type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import express from 'express';
import request from 'supertest';
import { ERROR_CATALOGUE, type ErrorName } from '../src/errors/catalogue.js';
import { apiError, errorHandler } from '../src/errors/index.js';
import { refusalEventOf } from '../src/errors/refusal-events.js';
import {
  publishSecurityEvent,
  SECURITY_EVENTS,
  SECURITY_EVENTS_CHANNEL,
  type SecurityEventName,
  securityEventsWanted,
} from '../src/events/index.js';
import { recordSecurityMetrics, SECURITY_METRICS } from '../src/otel/index.js';
import { knownSecuritySeries } from '../src/otel/security-series.js';
import { crossSiteProtection } from '../src/security/index.js';
import { stopEventScan } from './support/event-scan.js';

/**
 * The OpenTelemetry bridge (`express-api-conventions/otel`) with the real
 * SDK: a meter provider whose reader is collected on demand, as a Prometheus
 * scrape or a periodic export would. The whole-suite event scan is set
 * aside in this file: whether the bridge subscribes is the point here, and
 * the scan's own subscription would answer for it. It is not started again at
 * the end: the setup's afterAll runs first, and a scan started after it would
 * stay subscribed in this worker, a listener the next file's "nobody listens"
 * tests would find.
 */

beforeAll(stopEventScan);

class CollectOnDemand extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** The data points of one instrument, as the last collection saw them. */
async function pointsOf(reader: MetricReader, name: string): Promise<DataPoint<unknown>[]> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []) as DataPoint<unknown>[];
}

const byAttributes = (points: DataPoint<unknown>[]) =>
  points
    .filter((point) => point.value !== 0)
    .map((point) => ({ attributes: point.attributes as Attributes, value: point.value }))
    .sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)));

describe('recordSecurityMetrics()', () => {
  let reader: CollectOnDemand;
  let provider: MeterProvider;
  let stop: () => void;

  beforeEach(() => {
    reader = new CollectOnDemand();
    provider = new MeterProvider({ readers: [reader] });
    stop = recordSecurityMetrics({ meterProvider: provider });
  });

  afterEach(async () => {
    stop();
    await provider.shutdown();
  });

  it('counts each refusal an app makes, by event, outcome, rule and level', async () => {
    const app = express();
    app.use(crossSiteProtection({ trustedOrigins: ['https://app.example.com'] }));
    app.post('/v1/sessions', (_req, res) => res.status(201).json({}));
    app.use(errorHandler({ production: true, log: false }));
    for (let i = 0; i < 3; i++) {
      const res = await request(app)
        .post('/v1/sessions')
        .set('Sec-Fetch-Site', 'cross-site')
        .set('Origin', 'https://evil.example');
      expect(res.status).toBe(403);
    }
    expect((await request(app).post('/v1/sessions').set('Sec-Fetch-Site', 'same-origin')).status).toBe(201);

    // The rule is docs/conventions.md's rule that refused.
    const points = await pointsOf(reader, SECURITY_METRICS.events);
    expect(byAttributes(points)).toEqual([
      {
        attributes: { event: 'malicious_cross_site', outcome: 'failure', level: 'WARN', rule: 'crossSiteRequestRefused' },
        value: 3,
      },
    ]);
  });

  it('creates every known series at 0 when it starts, before any event', async () => {
    const points = await pointsOf(reader, SECURITY_METRICS.events);
    const key = (attributes: object) => JSON.stringify(Object.entries(attributes).sort());
    expect(points.map((point) => key(point.attributes)).sort()).toEqual(knownSecuritySeries().map(key).sort());
    expect(points.every((point) => point.value === 0)).toBe(true);
  });

  it('knows the series of every refusal of the error catalogue that is a security event', () => {
    const known = new Set(knownSecuritySeries().map((series) => JSON.stringify(series)));
    for (const name of Object.keys(ERROR_CATALOGUE) as ErrorName[]) {
      const event = refusalEventOf(apiError(name));
      if (event === undefined) continue;
      const series = { event: event.event, outcome: 'failure', level: SECURITY_EVENTS[event.event].level, rule: name };
      expect([name, known.has(JSON.stringify(series))]).toEqual([name, true]);
    }
  });

  it('names the counter after OpenTelemetry’s guidance, with its unit apart', async () => {
    publishSecurityEvent(undefined, {
      event: 'session_created',
      description: 'A session began.',
      outcome: 'success',
    });
    const { resourceMetrics } = await reader.collect();
    const [scope] = resourceMetrics.scopeMetrics;
    expect(scope?.scope.name).toBe('express-api-conventions');
    expect(scope?.metrics.map((m) => [m.descriptor.name, m.descriptor.unit])).toEqual([
      ['express_api_conventions.security.events', '{event}'],
    ]);
    expect(byAttributes(scope?.metrics[0]?.dataPoints ?? []).map(({ attributes }) => attributes)).toEqual([
      { event: 'session_created', outcome: 'success', level: 'INFO' },
    ]);
  });

  it('records sign-in durations and the password pool’s waits in seconds, by event and outcome', async () => {
    const signIn = (event: SecurityEventName, outcome: 'success' | 'failure', durationMs: number, poolWaitMs: number) =>
      publishSecurityEvent(undefined, { event, description: 'A sign-in.', outcome, durationMs, poolWaitMs });
    signIn('authn_login_success', 'success', 120, 0);
    signIn('authn_login_success', 'success', 380, 30);
    signIn('authn_login_fail', 'failure', 2000, 1500);
    publishSecurityEvent(undefined, { event: 'authz_fail', description: 'Refused.', outcome: 'failure' });

    const durations = byAttributes(await pointsOf(reader, SECURITY_METRICS.signInDuration));
    expect(durations.map(({ attributes }) => attributes)).toEqual([
      { event: 'authn_login_fail', outcome: 'failure' },
      { event: 'authn_login_success', outcome: 'success' },
    ]);
    const success = durations[1]?.value as Histogram;
    expect(success).toMatchObject({ count: 2, min: 0.12, max: 0.38 });
    expect(success.sum).toBeCloseTo(0.5);
    // The advised buckets, in seconds: 0.12 s falls in (0.1, 0.25], 0.38 s in (0.25, 0.5].
    expect(success.buckets.boundaries).toEqual([0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]);
    expect(success.buckets.counts.slice(6, 8)).toEqual([1, 1]);

    const waits = byAttributes(await pointsOf(reader, SECURITY_METRICS.passwordPoolWait));
    expect(waits.map(({ attributes, value }) => [attributes, (value as Histogram).count, (value as Histogram).sum])).toEqual([
      [{ event: 'authn_login_fail', outcome: 'failure' }, 1, 1.5],
      [{ event: 'authn_login_success', outcome: 'success' }, 2, 0.03],
    ]);
  });

  it('stops recording, and stops listening, once disposed', async () => {
    expect(channel(SECURITY_EVENTS_CHANNEL).hasSubscribers).toBe(true);
    stop();
    expect(channel(SECURITY_EVENTS_CHANNEL).hasSubscribers).toBe(false);
    publishSecurityEvent(undefined, { event: 'authz_fail', description: 'Refused.', outcome: 'failure' });
    expect(byAttributes(await pointsOf(reader, SECURITY_METRICS.events))).toEqual([]);
  });

  it('records with a meter it is given', async () => {
    stop();
    stop = recordSecurityMetrics({ meter: provider.getMeter('my-service') });
    publishSecurityEvent(undefined, { event: 'authz_fail', description: 'Refused.', outcome: 'failure' });
    const { resourceMetrics } = await reader.collect();
    // The first recorder's series stay at 0 in the provider; the event went to the meter given.
    const counted = resourceMetrics.scopeMetrics.filter((scope) =>
      scope.metrics.some((metric) => metric.dataPoints.some((point) => point.value !== 0)),
    );
    expect(counted.map((scope) => scope.scope.name)).toEqual(['my-service']);
  });

  it('records on the global meter provider when given none, the one the SDK registers', async () => {
    stop();
    metrics.setGlobalMeterProvider(provider);
    try {
      stop = recordSecurityMetrics();
      publishSecurityEvent(undefined, { event: 'authz_fail', description: 'Refused.', outcome: 'failure' });
      expect(byAttributes(await pointsOf(reader, SECURITY_METRICS.events)).map((point) => point.value)).toEqual([1]);
    } finally {
      metrics.disable();
    }
  });

  it('says what to install when @opentelemetry/api is missing and no meter is given', () => {
    jest.isolateModules(() => {
      jest.doMock('@opentelemetry/api', () => {
        throw new Error("Cannot find module '@opentelemetry/api' from 'src/otel/security-metrics.ts'");
      });
      const isolated = require('../src/otel/index.js') as typeof import('../src/otel/index.js');
      expect(() => isolated.recordSecurityMetrics()).toThrow(/npm install @opentelemetry\/api.*EAC_PEER_MISSING/s);
      // A meter provider given needs nothing of the API at run time.
      isolated.recordSecurityMetrics({ meterProvider: provider })();
    });
  });

  it('is a subscriber: the library builds events while it records, and not after', () => {
    expect(securityEventsWanted()).toBe(true);
    stop();
    expect(securityEventsWanted()).toBe(false);
  });
});
