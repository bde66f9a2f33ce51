import net from 'node:net';

/** An answer read off a raw socket. */
export interface RawAnswer {
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly head: string;
  readonly body: string;
  /** Whether the server closed the connection (before `waitMs` ran out). */
  readonly closed: boolean;
  /** Milliseconds from connecting to the server's close (or to giving up). */
  readonly elapsedMs: number;
}

export interface RawExchange {
  /** The bytes to send, one piece after the other. */
  readonly pieces: readonly (string | Buffer)[];
  /** Pause between pieces, in milliseconds. Default: 0. */
  readonly pauseMs?: number;
  /** Longest wait for the server to close, in milliseconds. Default: 5000. */
  readonly waitMs?: number;
}

/**
 * Sends raw bytes to 127.0.0.1:port and reads until the server closes the
 * connection or `waitMs` passes (then `closed` is false). Bounded in time.
 */
export function rawExchange(port: number, { pieces, pauseMs = 0, waitMs = 5000 }: RawExchange): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const head = text.slice(0, end === -1 ? text.length : end);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = end === -1 ? '' : Buffer.from(text.slice(end + 4), 'latin1').toString('utf8');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, head, body, closed, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may close while bytes are still being sent: that is the point.
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (socket.destroyed || done) break;
        socket.write(piece);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  });
}
