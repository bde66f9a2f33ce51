import express from 'express';
import request from 'supertest';
import { conventions, errorHandler, notFound } from '../src/index.js';
import { withConventions } from '../src/openapi/index.js';

/**
 * withConventions({ reportOnly }) describes what the preset sends in
 * report-only mode: CSP and COEP as their `-Report-Only` variants, and no
 * 429 or cross-site 403 when every request is report-only (README, "An app
 * that already runs"); with `when`, some requests are enforced, so both.
 */

interface Operation {
  responses: Record<string, { headers?: Record<string, unknown> }>;
}

const headersOf = (operation: Operation, status: string): string[] => Object.keys(operation.responses[status]?.headers ?? {});

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Orders', version: '1.0.0' },
  paths: {
    '/v1/orders': {
      post: {
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: { '201': { description: 'made' } },
      },
    },
  },
};

const described = (options: Parameters<typeof withConventions>[1]): Operation =>
  (withConventions(DOCUMENT, options) as { paths: Record<string, { post: Operation }> }).paths['/v1/orders']?.post as Operation;

describe('withConventions({ reportOnly })', () => {
  it('declares the headers report-only sends, not the enforced CSP and COEP', async () => {
    const app = express();
    app.use(conventions({ reportOnly: { log: false } }));
    app.post('/v1/orders', (_req, res) => {
      res.status(201).json({ id: 1 });
    });
    app.use(notFound(), errorHandler());
    const sent = await request(app).post('/v1/orders').send({});
    expect(sent.headers['content-security-policy-report-only']).toBeDefined();
    expect(sent.headers['cross-origin-embedder-policy-report-only']).toBeDefined();
    expect(sent.headers['content-security-policy']).toBeUndefined();
    expect(sent.headers['cross-origin-embedder-policy']).toBeUndefined();

    const headers = headersOf(described({ reportOnly: true }), '201');
    expect(headers).toEqual(
      expect.arrayContaining(['Content-Security-Policy-Report-Only', 'Cross-Origin-Embedder-Policy-Report-Only']),
    );
    expect(headers).not.toContain('Content-Security-Policy');
    expect(headers).not.toContain('Cross-Origin-Embedder-Policy');
  });

  it('declares no 429 and no cross-site 403 when every request is report-only', () => {
    const statuses = Object.keys(described({ reportOnly: true }).responses);
    expect(statuses).not.toContain('429');
    expect(statuses).not.toContain('403');
    expect(headersOf(described({ reportOnly: true }), '201')).toContain('RateLimit');
  });

  it('declares both variants, 429 and 403 when `when` leaves some requests enforced', () => {
    const operation = described({ reportOnly: { when: () => true } });
    const headers = headersOf(operation, '201');
    expect(headers).toEqual(
      expect.arrayContaining([
        'Content-Security-Policy',
        'Content-Security-Policy-Report-Only',
        'Cross-Origin-Embedder-Policy',
        'Cross-Origin-Embedder-Policy-Report-Only',
      ]),
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['403', '429']));
  });

  it('is as before without reportOnly', () => {
    const operation = described({});
    const headers = headersOf(operation, '201');
    expect(headers).toContain('Content-Security-Policy');
    expect(headers).not.toContain('Content-Security-Policy-Report-Only');
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['403', '429']));
  });
});
