import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { invalidOption } from 'express-api-conventions/extend';
import { checkAuthentication } from './auth-checks.js';
import { checkCaching, checkNotModifiedAnswers } from './caching-checks.js';
import { RunContext } from './context.js';
import { checkCors } from './cors-checks.js';
import { checkErrorBodies, checkErrors } from './errors-checks.js';
import { EXPLORE_LIMIT, explore, plannedRequests, underPrefix } from './explore.js';
import { checkHeaders } from './header-checks.js';
import { checkJsonEscaping } from './json-checks.js';
import { checkLimits, probeRateLimit } from './limit-checks.js';
import { checkOpenApiDocument } from './openapi-checks.js';
import { loadOpenApi } from './openapi-source.js';
import { type ConformanceOptions, type ConformancePhase, readConformanceOptions } from './options.js';
import { checkPaths } from './path-checks.js';
import { Probe } from './probe.js';
import { checkQueryParameters } from './query-checks.js';
import { buildReport, type ConformanceReport } from './report.js';
import { checkResourceConventions } from './resource-checks.js';
import { checkWrites } from './write-checks.js';

/** What checkConventions() probes: a running API's base URL, or an app (an Express app or any Node request listener). */
export type ConformanceTarget = string | URL | RequestListener;

function baseUrlOf(target: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(target));
  } catch {
    return invalidOption('checkConventions', 'target', String(target), 'an http(s) base URL or an app');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    invalidOption('checkConventions', 'target', String(target), 'an http(s) base URL or an app');
  }
  url.search = '';
  url.hash = '';
  return url;
}

/** Starts an app on an ephemeral port of 127.0.0.1, for the run only. */
async function listen(app: RequestListener): Promise<{ server: Server; url: URL }> {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: new URL(`http://127.0.0.1:${port}/`) };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Probes an API over HTTP and reports, check by check, whether it follows
 * the conventions. Given an app instead of a URL, it serves the app on an ephemeral
 * 127.0.0.1 port for the length of the run (nothing else to start or stop),
 * so one jest test can hold a whole suite:
 *
 * ```ts
 * const report = await checkConventions(app, { resource: '/v1/users/1' });
 * expect(report.failures).toEqual([]);
 * ```
 *
 * It sends at most `maxRequests` requests (default 60, hard cap 200), and
 * only GET, HEAD, OPTIONS and TRACE unless `allowWrites` is set (then also POST to
 * the token endpoint, and PATCH and POST to the `disposable` resource). Wrong options
 * throw a ConfigurationError before any request.
 */
export async function checkConventions(
  target: ConformanceTarget,
  options?: Readonly<ConformanceOptions>,
): Promise<ConformanceReport> {
  const config = readConformanceOptions(options);
  const given = typeof target === 'function' ? undefined : baseUrlOf(target);
  for (const path of [
    config.resource,
    ...config.paths,
    config.protected,
    config.tokenEndpoint,
    config.reflect,
    config.forbidden,
    config.disposable,
  ]) {
    if (path !== undefined && /^https?:\/\//.test(path) && (!given || new URL(path).origin !== given.origin)) {
      const expected = given
        ? `a path on the target's origin (${given.origin})`
        : 'a path (the app is served on an ephemeral port)';
      invalidOption('checkConventions', 'paths', path, expected);
    }
  }
  const started = given ? undefined : await listen(target as RequestListener);
  const base = given ?? (started as { url: URL }).url;
  try {
    // Exploring (explore.ts): the progress line counts against the planned requests, refined once exploring ends.
    const prefix = base.pathname.replace(/\/+$/, '');
    const under = (path: string) => underPrefix(prefix, path);
    let planned = Math.min(config.maxRequests, EXPLORE_LIMIT + plannedRequests(config, 0, () => false));
    const onProgress = config.onProgress;
    // While exploring, what the run will send depends on what the answers link to: the phase says the count is an estimate.
    let phase: ConformancePhase = 'exploring';
    const progress =
      onProgress && ((sent: number, _cap: number, label: string) => onProgress(sent, Math.max(sent, planned), label, phase));
    const probe = new Probe(base, config.maxRequests, config.timeoutMs, progress);
    const explored = await explore(probe, config, base, prefix, under, (expected, pending) => {
      const fetched = new Set(pending);
      planned = plannedRequests(expected, probe.requestsSent + pending.length, (path) => fetched.delete(under(path)));
    });
    // A path exploring requested stands for one of its occurrences in `paths` (a path given twice is sent twice).
    const unsent = () => {
      const fetched = new Set(explored.fetched);
      return (path: string) => fetched.delete(under(path));
    };
    planned = plannedRequests(explored.config, probe.requestsSent, unsent());
    phase = 'checking';
    const alreadySent = unsent();
    const ctx = new RunContext(probe, explored.config, prefix);
    for (const secret of Object.values(config.credentials)) if (secret !== undefined) ctx.secrets.add(secret);

    await checkErrors(ctx);
    for (const path of ctx.config.paths) {
      if (alreadySent(path)) continue;
      if (!(await ctx.send({ purpose: 'path', method: 'GET', path: ctx.under(path) }))) break;
    }
    await checkQueryParameters(ctx);
    await checkCaching(ctx);
    await checkCors(ctx);
    await checkAuthentication(ctx);
    await probeRateLimit(ctx);
    // Last: the writes use the access token, and may (if override is honoured on GET) delete the resource.
    await checkWrites(ctx);
    // After the writes: a change holding < or > shows the escaping too.
    await checkJsonEscaping(ctx);

    checkResourceConventions(ctx);
    checkNotModifiedAnswers(ctx);
    checkErrorBodies(ctx);
    checkHeaders(ctx);
    checkLimits(ctx);
    checkPaths(ctx, base.origin);
    checkOpenApiDocument(ctx, config.openapi === undefined ? undefined : await loadOpenApi(config.openapi, config.timeoutMs));
    return buildReport(given ? base.href : 'app (served on an ephemeral 127.0.0.1 port)', probe.requestsSent, ctx.list(), {
      gate: { ignore: config.ignore, failOn: config.failOn, baseline: config.baseline },
      openapi: config.openapi !== undefined,
    });
  } finally {
    if (started) await close(started.server);
  }
}
