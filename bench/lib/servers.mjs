// The parent side: starts each bench server as its own Node process (IPC
// channel, 127.0.0.1, a port the system picks) and reads its CPU time.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVE = fileURLToPath(new URL('../servers/serve.mjs', import.meta.url));
const START_TIMEOUT_MS = 15_000;

/** Serves `bench/apps/<name>.mjs` in its own process; resolves once it listens. */
export function startServer(name, { execArgv = [], env = {} } = {}) {
  const child = fork(SERVE, [name], {
    execArgv,
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${name}: not listening after ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name}: exited with ${code} before listening`));
    });
    child.once('message', (message) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve(new ServerProcess(name, child, message.port));
    });
  });
}

class ServerProcess {
  constructor(name, child, port) {
    this.name = name;
    this.child = child;
    this.port = port;
    this.origin = `http://127.0.0.1:${port}`;
  }

  /** The server process's own `process.cpuUsage()` (µs), heap in use and bytes allocated since it started. */
  usage() {
    return new Promise((resolve) => {
      const onMessage = (message) => {
        if (message.type !== 'usage') return;
        this.child.off('message', onMessage);
        resolve({
          cpuMicros: message.cpu.user + message.cpu.system,
          heapUsed: message.heapUsed,
          allocatedBytes: message.allocatedBytes,
        });
      };
      this.child.on('message', onMessage);
      this.child.send('usage');
    });
  }

  stop() {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.send('stop');
      setTimeout(() => this.child.kill('SIGKILL'), 3000).unref();
    });
  }
}
