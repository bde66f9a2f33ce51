import { randomUUID } from 'node:crypto';
import type { Request } from 'express';

/**
 * What joins an event to its request, its trace and its other events
 * (docs/observability.md, "Joining events"): the request's id, the W3C
 * trace context, the user agent. Read only when an event is published.
 */

/** An incoming id is taken as it is only if it is this: visible ASCII, short. */
const WELL_FORMED_ID = /^[\x21-\x7e]{1,128}$/;

/** W3C Trace Context `traceparent`, version 00: trace id and parent span id, neither all zeros. */
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-[0-9a-f]{2}$/;

const REQUEST_IDS = new WeakMap<object, string>();

/**
 * Whether the connection is from a proxy Express's `trust proxy` trusts:
 * then a header it set (`Request-Id` or `X-Request-Id`, `traceparent`) is
 * the proxy's, not the client's. The same test `req.ip` is resolved with.
 */
function fromTrustedProxy(req: Request): boolean {
  const trust = req.app?.get('trust proxy fn') as ((address: string | undefined, hop: number) => boolean) | undefined;
  return typeof trust === 'function' && trust(req.socket?.remoteAddress, 0);
}

/** A header's value when it is one well-formed string. */
function headerOf(req: Request, name: string): string | undefined {
  const value = req.headers?.[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The request's id, the same for every event of the request: the app's own
 * (`req.id`, as pino-http and express-request-id set it), else the
 * `Request-Id` or `X-Request-Id` a trusted proxy set, else one made here. A
 * made or taken id is answered in `Request-Id` when the answer has not
 * started and names none yet, so the client can quote it: no `X-` prefix on
 * a header the library adds (docs/conventions.md rule 10, RFC 6648).
 */
export function requestIdOf(req: Request): string {
  const known = REQUEST_IDS.get(req);
  if (known !== undefined) return known;
  const own = (req as { id?: unknown }).id;
  const incoming = fromTrustedProxy(req) ? (headerOf(req, 'request-id') ?? headerOf(req, 'x-request-id')) : undefined;
  const id =
    typeof own === 'string' || typeof own === 'number'
      ? String(own)
      : incoming !== undefined && WELL_FORMED_ID.test(incoming)
        ? incoming
        : randomUUID();
  REQUEST_IDS.set(req, id);
  const res = req.res;
  if (res !== undefined && !res.headersSent && !res.hasHeader('request-id') && !res.hasHeader('x-request-id')) {
    res.setHeader('Request-Id', id);
  }
  return id;
}

type OpenTelemetryApi = typeof import('@opentelemetry/api');

let openTelemetry: OpenTelemetryApi | null | undefined;

/** `@opentelemetry/api` when installed (an optional peer dependency), looked for once. */
function openTelemetryApi(): OpenTelemetryApi | null {
  if (openTelemetry === undefined) {
    try {
      openTelemetry = require('@opentelemetry/api') as OpenTelemetryApi;
    } catch {
      openTelemetry = null;
    }
  }
  return openTelemetry;
}

/**
 * The trace the event belongs to: the active span's when OpenTelemetry
 * traces the request, else the `traceparent` a trusted proxy sent.
 */
export function traceOf(req: Request | undefined): { traceId: string; spanId: string } | undefined {
  const api = openTelemetryApi();
  const active = api?.trace.getSpanContext(api.context.active());
  if (active !== undefined && api?.isSpanContextValid(active)) return { traceId: active.traceId, spanId: active.spanId };
  if (req === undefined || !fromTrustedProxy(req)) return undefined;
  const parent = TRACEPARENT.exec(headerOf(req, 'traceparent') ?? '');
  return parent === null ? undefined : { traceId: parent[1] as string, spanId: parent[2] as string };
}
