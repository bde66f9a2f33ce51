// The child side of the harness: `node bench/servers/serve.mjs <app>` serves
// bench/apps/<app>.mjs in its own process, started by bench/lib/servers.mjs
// with an IPC channel. It listens on 127.0.0.1 on a port the system picks,
// says so, and answers two messages: `usage` (its own CPU time and heap, read
// around each load) and `stop`.
import http from 'node:http';

const name = process.argv[2];
const app = await import(`../apps/${name}.mjs`);

let server;
if (app.createFastify) {
  const fastify = await app.createFastify();
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  server = fastify.server;
} else {
  server = http.createServer(await app.createHandler());
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
}

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
process.send({ type: 'ready', port: server.address().port });
