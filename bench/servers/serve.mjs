// The child side of the harness: every bench server is its own process,
// started by bench/lib/servers.mjs with an IPC channel. It listens on
// 127.0.0.1 on a port the system picks, says so, and answers two messages:
// `usage` (its own CPU time and heap, read around each load) and `stop`.

/** Reports the listening port to the harness and serves its messages. */
export function announce(server) {
  const { port } = server.address();
  process.on('message', (message) => {
    if (message === 'usage') {
      process.send({ type: 'usage', cpu: process.cpuUsage(), heapUsed: process.memoryUsage().heapUsed });
    } else if (message === 'stop') {
      server.close();
      process.exit(0);
    }
  });
  // The harness died or let go: never outlive it.
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', port });
}

/** Node's `server.listen(0, '127.0.0.1')`, as a promise of the server. */
export function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** The bearer token from `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(req) {
  const header = req.headers.authorization;
  return typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined;
}
