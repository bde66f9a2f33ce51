import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * The checker's HTTP client: node:http rather than fetch, because fetch
 * refuses the TRACE method (the one safe method that no route answers, used
 * for the 405 check) and follows or hides parts of a response. Every request
 * counts against a budget; past it, nothing more is sent.
 */

/** The most requests one run may send, whatever `maxRequests` says. */
export const CONFORMANCE_REQUEST_CAP = 200;
/** Requests one run sends at most unless `maxRequests` says otherwise. */
export const CONFORMANCE_DEFAULT_REQUESTS = 60;
/** A response body is read up to this many bytes; the rest is dropped. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface Exchange {
  /** Why the checker sent it, e.g. `unknown route`. */
  readonly purpose: string;
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  /** The request's header names, lower case (values are never reported: they may hold credentials). */
  readonly sentHeaders: readonly string[];
  readonly status: number;
  /** Response headers, names in lower case, repeated ones joined with `, ` (Set-Cookie with a newline). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface ProbeRequest {
  readonly purpose: string;
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export class BudgetExhausted extends Error {
  constructor(readonly cap: number) {
    super(`the request budget (${cap}) is spent`);
  }
}

/** One line of evidence naming a request and its answer. */
export const describeExchange = (exchange: Exchange): string => `${exchange.method} ${exchange.path} -> ${exchange.status}`;

export class Probe {
  readonly exchanges: Exchange[] = [];
  private sent = 0;

  constructor(
    private readonly base: URL,
    private readonly cap: number,
    private readonly timeoutMs: number,
    private readonly onRequest?: (sent: number, cap: number, label: string) => void,
  ) {}

  get requestsSent(): number {
    return this.sent;
  }

  get remaining(): number {
    return this.cap - this.sent;
  }

  /** Sends one request (never following redirects) and records the exchange. */
  async send(req: ProbeRequest): Promise<Exchange> {
    if (this.sent >= this.cap) throw new BudgetExhausted(this.cap);
    this.sent += 1;
    const url = new URL(req.path, this.base);
    this.onRequest?.(this.sent, this.cap, `${req.method} ${url.pathname}${url.search}`);
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
    const exchange = await new Promise<Exchange>((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send(url, { method: req.method, headers, timeout: this.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < MAX_BODY_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('error', reject);
        res.on('end', () => {
          const received: Record<string, string> = {};
          const raw = res.rawHeaders;
          for (let i = 0; i < raw.length; i += 2) {
            const name = (raw[i] as string).toLowerCase();
            const value = raw[i + 1] as string;
            // Set-Cookie cannot be joined with commas (RFC 9110 §5.3): one per line.
            const separator = name === 'set-cookie' ? '\n' : ', ';
            received[name] = name in received ? `${received[name]}${separator}${value}` : value;
          }
          resolve({
            purpose: req.purpose,
            method: req.method,
            path: `${url.pathname}${url.search}`,
            sentHeaders: Object.keys(headers).map((name) => name.toLowerCase()),
            status: res.statusCode ?? 0,
            headers: received,
            body: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8'),
          });
        });
      });
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end(req.body);
    });
    this.exchanges.push(exchange);
    return exchange;
  }
}
