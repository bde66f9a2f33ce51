// The child side of the harness: `node bench/servers/serve.mjs <app>` serves
// bench/apps/<app>.mjs in its own process, started by bench/lib/servers.mjs
// with an IPC channel. It listens on 127.0.0.1 on a port the system picks,
// says so, and answers two messages: `usage` (its own CPU time, heap and
// bytes allocated so far, read around each load) and `stop`.
import http from 'node:http';
import v8 from 'node:v8';

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

// Bytes allocated on the heap since start, over real sockets: the
// heap's growth between collections, read from V8's GC profiler. Each
// collection's heap size before it, less the size after the one before (or
// at the last reading), is what was allocated in between.
let allocated = 0;
let mark = v8.getHeapStatistics().used_heap_size;
let profiler = new v8.GCProfiler();
profiler.start();
function allocatedSoFar() {
  const { statistics } = profiler.stop();
  let previous = mark;
  for (const gc of statistics) {
    allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - previous);
    previous = gc.afterGC.heapStatistics.usedHeapSize;
  }
  mark = v8.getHeapStatistics().used_heap_size;
  allocated += Math.max(0, mark - previous);
  profiler = new v8.GCProfiler();
  profiler.start();
  return allocated;
}

process.on('message', (message) => {
  if (message === 'usage') {
    const allocatedBytes = allocatedSoFar();
    process.send({ type: 'usage', cpu: process.cpuUsage(), heapUsed: process.memoryUsage().heapUsed, allocatedBytes });
  } else if (message === 'stop') {
    server.close();
    process.exit(0);
  }
});
// The harness died or let go: never outlive it.
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', port: server.address().port });
