/** The parts of a request that pathWithoutQuery() reads: Express's and Node's. */
interface RequestUrl {
  readonly originalUrl?: string;
  readonly url?: string;
}

/**
 * The path the client asked for, without its query: Express's `originalUrl`
 * (the whole path, also inside a mounted router), else Node's `url`. Used
 * for logs, error detail and the path rules; never decoded.
 */
export function pathWithoutQuery(req: RequestUrl): string {
  return pathAndQuery(req)[0];
}

/** The path the client asked for and its query (after the `?`, `undefined` without one), as written. */
export function pathAndQuery(req: RequestUrl): readonly [path: string, query: string | undefined] {
  const url = req.originalUrl ?? req.url ?? '';
  const mark = url.indexOf('?');
  return mark === -1 ? [url, undefined] : [url.slice(0, mark), url.slice(mark + 1)];
}
