import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import express from 'express';
import { tokenRouter } from 'express-api-conventions-authorization-server';
import request from 'supertest';
import { errorHandler } from '../src/errors/index.js';
import { publishSecurityEvent } from '../src/events/index.js';
import { recordSecurityMetrics } from '../src/otel/index.js';
import { knownSecuritySeries } from '../src/otel/security-series.js';
import { crossSiteProtection } from '../src/security/index.js';
import { documentedAlert } from './support/alerts.js';
import { AUDIENCE, ISSUER, KEYS, SCOPES, seedStores, TEST_COST, testHasher } from './support/oauth2.js';
import {
  closeServer,
  describeWith,
  freePort,
  listen,
  PROMETHEUS,
  type PrometheusServer,
  startPrometheus,
} from './support/services.js';
import { waitUntil } from './support/timing.js';

/**
 * The metrics as a team runs them: recordSecurityMetrics() on an SDK meter
 * provider whose reader is @opentelemetry/exporter-prometheus, scraped by a
 * real Prometheus; the alerts of docs/observability.md ("Alerts") evaluated
 * by it, as written, during the attacks they name.
 */

const EVENTS = 'express_api_conventions_security_events_total';
const WRONG_PASSWORD = 'not-the-password';

async function startExporter(): Promise<{ exporter: PrometheusExporter; port: number }> {
  const port = await freePort();
  let exporter: PrometheusExporter | undefined;
  await new Promise<void>((resolve, reject) => {
    exporter = new PrometheusExporter({ host: '127.0.0.1', port }, (error) => (error ? reject(error) : resolve()));
  });
  return { exporter: exporter as PrometheusExporter, port };
}

/** The service: the token endpoint behind a proxy it trusts, and a write that refuses other sites. */
async function service(): Promise<Server> {
  const app = express();
  app.set('trust proxy', true);
  app.use(
    tokenRouter({
      keys: KEYS,
      issuer: ISSUER,
      audience: AUDIENCE,
      scopes: SCOPES,
      passwordHasher: testHasher,
      passwordCost: TEST_COST,
      refreshGraceSeconds: 0,
      ...(await seedStores()),
    }),
  );
  app.use(crossSiteProtection());
  app.post('/v1/notes', (_req, res) => res.status(201).json({}));
  app.use(errorHandler({ production: true, log: false }));
  return (await listen(app)).server;
}

/** The names docs/observability.md says the exporter serves (its "served as" column). */
function documentedServedNames(): string[] {
  const doc = readFileSync(join(__dirname, '..', 'docs', 'observability.md'), 'utf8');
  const rows = doc
    .split('\n')
    .filter((line) => /^\| `express_api_conventions\.[a-z_.]+` +\| `express_api_conventions_/.test(line));
  return rows.flatMap((row) => [...(row.split('|')[2] ?? '').matchAll(/`([a-z_]+)`/g)].map((match) => match[1] as string));
}

const labelsOf = (sample: { metric: Record<string, string> }) => {
  const { event, outcome, level, rule } = sample.metric;
  return JSON.stringify({ event, outcome, level, ...(rule === undefined ? {} : { rule }) });
};

describe('the exporter serves the names the docs give', () => {
  it('serves every known series at 0 from the start, and the histograms by their documented names', async () => {
    const { exporter, port } = await startExporter();
    const provider = new MeterProvider({ readers: [exporter] });
    const stop = recordSecurityMetrics({ meterProvider: provider });
    try {
      const before = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const zeros = before.split('\n').filter((line) => line.startsWith(`${EVENTS}{`));
      expect(zeros).toHaveLength(knownSecuritySeries().length);
      expect(zeros.every((line) => line.endsWith(' 0'))).toBe(true);
      expect(before).toContain(
        `${EVENTS}{event="authn_token_reuse",outcome="failure",level="CRITICAL",rule="oauthInvalidGrant",otel_scope_name="express-api-conventions"} 0`,
      );

      publishSecurityEvent(undefined, {
        event: 'authn_login_success',
        description: 'A sign-in.',
        outcome: 'success',
        durationMs: 120,
        poolWaitMs: 3,
      });
      const served = new Set(
        (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
          .split('\n')
          .filter((line) => line.startsWith('express_api_conventions_'))
          .map((line) => line.replace(/[{ ].*$/, '')),
      );
      // Exactly the names of the docs' table, no more and no fewer.
      expect(served).toEqual(new Set(documentedServedNames()));
    } finally {
      stop();
      await provider.shutdown();
    }
  });
});

describeWith(PROMETHEUS, 'the documented alerts, on a real Prometheus', () => {
  let provider: MeterProvider;
  let stop: () => void;
  let server: Server;
  let url: string;
  let prometheus: PrometheusServer;
  let firstScrape: string[];

  beforeAll(async () => {
    // A service that has just started: its meter provider new, nothing recorded yet.
    const { exporter, port } = await startExporter();
    provider = new MeterProvider({ readers: [exporter] });
    stop = recordSecurityMetrics({ meterProvider: provider });
    server = await service();
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    prometheus = await startPrometheus([`127.0.0.1:${port}`]);
    firstScrape = (await prometheus.query(EVENTS)).map(labelsOf).sort();
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
    if (server) await closeServer(server);
    stop?.();
    await provider?.shutdown();
  });

  const fires = async (name: string) => prometheus.query(documentedAlert(name));

  it('has every known series from the first scrape, each at 0', () => {
    const known = knownSecuritySeries().map((series) => labelsOf({ metric: { ...series } }));
    expect(firstScrape).toEqual(known.sort());
    expect(firstScrape.length).toBeGreaterThan(40);
  });

  it('token-reuse: the first refresh-token reuse after a start shows in increase() over the next scrape', async () => {
    expect(await fires('token-reuse')).toEqual([]);
    const signedIn = await request(url).post('/v1/oauth2/token').type('form').send({
      grant_type: 'password',
      username: 'alice',
      password: 'wonderland-rabbit-hole',
      client_id: 'demo-client',
      client_secret: 'demo-secret',
    });
    expect(signedIn.status).toBe(200);
    const refresh = {
      grant_type: 'refresh_token',
      refresh_token: signedIn.body.refresh_token,
      client_id: 'demo-client',
      client_secret: 'demo-secret',
    };
    expect((await request(url).post('/v1/oauth2/token').type('form').send(refresh)).status).toBe(200);
    const reused = await request(url).post('/v1/oauth2/token').type('form').send(refresh);
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);

    await prometheus.nextScrape();
    const [alert, ...more] = await fires('token-reuse');
    expect(more).toEqual([]);
    expect(alert?.value).toBeGreaterThan(0);
  });

  it('sign-in-attack: 30 wrong passwords from 19 addresses fire it; sign-in-slow returns a series', async () => {
    expect(await fires('sign-in-attack')).toEqual([]);
    for (let i = 0; i < 30; i++) {
      const res = await request(url)
        .post('/v1/oauth2/token')
        .set('X-Forwarded-For', `203.0.113.${(i % 19) + 1}`)
        .type('form')
        .send({
          grant_type: 'password',
          username: 'alice',
          password: WRONG_PASSWORD,
          client_id: 'demo-client',
          client_secret: 'demo-secret',
        });
      expect([400, 429]).toContain(res.status);
    }
    await prometheus.nextScrape();
    const [alert, ...more] = await fires('sign-in-attack');
    expect(more).toEqual([]);
    expect(alert?.value).toBeGreaterThan(20);

    // The histograms' series are born at their first sign-in: rate() reads them once they have grown between two scrapes.
    for (let i = 0; i < 3; i++) {
      const res = await request(url).post('/v1/oauth2/token').type('form').send({
        grant_type: 'password',
        username: 'reader',
        password: 'read-only-pass',
        client_id: 'demo-client',
        client_secret: 'demo-secret',
      });
      expect(res.status).toBe(200);
    }
    await prometheus.nextScrape();
    // The p95 alerts' own expressions return a series (the sign-ins at the test's cost are fast: below 1 s).
    for (const name of ['sign-in-slow', 'password-pool-wait']) {
      const [p95, ...more] = await prometheus.query(documentedAlert(name).replace(/ > 1$/, ''));
      expect(more).toEqual([]);
      expect(Number.isFinite(p95?.value)).toBe(true);
      expect(p95?.value).toBeLessThan(1);
      expect(await fires(name)).toEqual([]);
    }
  });

  it('cross-origin: 25 writes from another site fire it, for malicious_cross_site', async () => {
    expect(await fires('cross-origin')).toEqual([]);
    for (let i = 0; i < 25; i++) {
      const res = await request(url).post('/v1/notes').set('Sec-Fetch-Site', 'cross-site').set('Origin', 'https://evil.example');
      expect(res.status).toBe(403);
    }
    await prometheus.nextScrape();
    const fired = await fires('cross-origin');
    expect(fired.map((sample) => sample.metric.event)).toEqual(['malicious_cross_site']);
  });

  it('made no series during the attacks that was not there at 0 from the first scrape', async () => {
    await waitUntil(async () => (await prometheus.query(EVENTS)).length > 0, 'a scrape');
    expect((await prometheus.query(EVENTS)).map(labelsOf).sort()).toEqual(firstScrape);
  });
});
