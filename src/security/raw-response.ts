import { STATUS_CODES } from 'node:http';

/**
 * A whole HTTP/1.1 response as text, for a socket that Node's parser refused
 * before any `ServerResponse` existed (server 'clientError'): the status
 * line, the given headers, `Content-Length` in bytes, then the body.
 */
export function rawHttpResponse(status: number, headers: Iterable<readonly [string, string]>, body: string): string {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
  for (const [name, value] of headers) head += `${name}: ${value}\r\n`;
  return `${head}Content-Length: ${Buffer.byteLength(body, 'utf8')}\r\n\r\n${body}`;
}
