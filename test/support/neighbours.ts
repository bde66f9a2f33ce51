import type { Server } from 'node:http';
import http from 'node:http';
import type express from 'express';
import type { Express, RequestHandler } from 'express';
import type * as library from '../../src/index.js';
import type { ConventionsOptions } from '../../src/index.js';
import { closeServer, listen } from './services.js';
import { headersOf } from './spec-headers.js';

/** Express and the library as one fresh process would load them. */
export interface Stack {
  readonly express: typeof express;
  readonly library: typeof library;
}

/**
 * Express (5, or 4 through the `express4` alias) and the library loaded
 * afresh, in a module registry of their own: "the first request of a fresh
 * app" means the first one this copy of Express and of the library ever
 * sees, whatever tests ran before in this file.
 */
export function freshStack(version: 'Express 5' | 'Express 4'): Stack {
  let stack: Stack | undefined;
  jest.isolateModules(() => {
    stack = {
      express: require(version === 'Express 5' ? 'express' : 'express4') as typeof express,
      library: require('../../src/index.js') as typeof library,
    };
  });
  return stack as Stack;
}

/** The versions every neighbour suite runs on. */
export const VERSIONS = ['Express 5', 'Express 4'] as const;

/**
 * Where teams put the preset relative to a middleware they already run:
 * after it, before it, or in a sub-app (`app.use('/api', api)`) with the
 * neighbour in the parent app.
 */
export const LAYOUTS = [
  'neighbour before the preset',
  'preset before the neighbour',
  'preset in a sub-app, neighbour in the parent',
] as const;
export type Layout = (typeof LAYOUTS)[number];

export interface LayoutApp {
  readonly app: Express;
  /** The prefix of every route path: `''`, or the sub-app's mount path. */
  readonly base: string;
}

/**
 * One app in one layout: the neighbours, the preset (with `options`), the
 * routes, then notFound() and errorHandler(). Routes are registered without
 * the base; requests go to `base + path`.
 */
export function layoutApp(
  stack: Stack,
  layout: Layout,
  neighbours: RequestHandler[],
  routes: (app: Express) => void,
  options: ConventionsOptions = {},
): LayoutApp {
  const factory = stack.express;
  const { conventions, errorHandler, notFound } = stack.library;
  const app = factory();
  const finish = (target: Express) => {
    routes(target);
    target.use(notFound(), errorHandler({ log: false }));
  };
  if (layout === 'neighbour before the preset') {
    if (neighbours.length > 0) app.use(neighbours);
    app.use(conventions(options));
    finish(app);
    return { app, base: '' };
  }
  if (layout === 'preset before the neighbour') {
    app.use(conventions(options));
    if (neighbours.length > 0) app.use(neighbours);
    finish(app);
    return { app, base: '' };
  }
  if (neighbours.length > 0) app.use(neighbours);
  const api = factory();
  api.use(conventions(options));
  finish(api);
  app.use('/api', api);
  return { app, base: '/api' };
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
  readonly text: string;
}

/** A listening server for `app` on 127.0.0.1 and a fetch() against it. */
export async function serve(app: Express): Promise<{
  url: string;
  server: Server;
  fetch(path: string, init?: RequestInit): Promise<Answer>;
  close(): Promise<void>;
}> {
  const { server, url } = await listen(app);
  return {
    url,
    server,
    async fetch(path, init) {
      const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000), ...init });
      const body = Buffer.from(await response.arrayBuffer());
      return { status: response.status, headers: headersOf(response), body, text: body.toString('utf8') };
    },
    close: () => closeServer(server),
  };
}

/**
 * One GET through node:http, the body as sent (no decoding, unlike fetch):
 * for content-coding, ranges and exact bytes.
 */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers as Record<string, string | string[]>,
          body,
          text: body.toString('utf8'),
        });
      });
      res.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url}: no answer in 10 s`)));
    request.on('error', reject);
  });
}
