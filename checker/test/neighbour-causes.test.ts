import cors from 'cors';
import express, { type Express } from 'express';
import { conventions, errorHandler, notFound } from 'express-api-conventions';
import helmet from 'helmet';
import { type CheckResult, type ConformanceReport, checkConventions } from '../src/index.js';

/**
 * A finding caused by a common middleware an app already
 * runs (helmet with its defaults, the `cors` package) names that middleware
 * and what to remove or reconfigure, never "mount securityHeaders()" for a
 * preset that is mounted, nor "rename the header" for a header helmet sent.
 */

const ORIGIN = 'https://app.example.com';

function neighbourApp(withPreset: boolean): Express {
  const app = express();
  app.use(helmet());
  app.use(cors({ origin: [ORIGIN], credentials: true }));
  if (withPreset) app.use(conventions({ responseLinter: false }));
  app.get('/v1/users/:id', (req, res) => {
    res.json({ id: req.params.id, name: 'Ada' });
  });
  // JSON errors either way: Express's own 404 page sends a CSP of its own.
  app.use(notFound(), errorHandler({ log: false }));
  return app;
}

const failure = (report: ConformanceReport, id: string): CheckResult | undefined =>
  report.failures.find((result) => result.id === id);

describe('helmet and the `cors` package in front of the conventions', () => {
  let report: ConformanceReport;
  beforeAll(async () => {
    report = await checkConventions(neighbourApp(true), { origin: ORIGIN, resource: '/v1/users/1', paths: ['/v1/users'] });
  });

  it("blames helmet for X-Download-Options, not the app's naming", () => {
    const found = failure(report, 'paths.no-x-prefix');
    expect(found?.evidence?.seen).toContain('x-download-options');
    expect(found?.cause).toBe('helmet-defaults');
    const group = report.causes.find((cause) => cause.id === 'helmet-defaults');
    expect(group?.fix).toContain("Remove the app's own `helmet()`");
    expect(group?.fix).toContain('xDownloadOptions: false');
  });

  it('blames the `cors` package for a preflight it answered 204 without a type, the headers it lacks included', () => {
    for (const id of ['cors.preflight.status', 'cors.preflight.content-type', 'security.coep', 'security.cache-control']) {
      expect(failure(report, id)?.cause).toBe('cors-package');
    }
    const group = report.causes.find((cause) => cause.id === 'cors-package');
    expect(group?.fix).toContain('corsPolicy');
    expect(group?.fix).toContain('preflightContinue: true');
  });

  it('reports no finding whose fix names a middleware of this package that is mounted', () => {
    const wrong = report.failures.filter((result) => ['security-headers', 'custom-headers', 'cors'].includes(result.cause));
    expect(wrong.map((result) => `${result.id}: ${result.cause}`)).toEqual([]);
  });
});

describe('helmet alone, with its defaults', () => {
  it('puts the CSP, HSTS and X-Frame-Options findings under helmet-defaults', async () => {
    const report = await checkConventions(neighbourApp(false), { resource: '/v1/users/1' });
    for (const id of ['security.csp', 'security.hsts', 'security.frame-options']) {
      expect(failure(report, id)?.cause).toBe('helmet-defaults');
    }
    // A header helmet never sends is still the conventions' own finding.
    expect(failure(report, 'security.coep')?.cause).toBe('security-headers');
  });
});
