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
  const url = req.originalUrl ?? req.url ?? '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
