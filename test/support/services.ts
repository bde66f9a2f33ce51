import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Real services for tests: a real redis-server and a real headless Chromium.
 *
 * On a developer's machine without the binary, the suites that need it are
 * skipped with a loud message. In CI (`CI=true`, or `REQUIRE_SERVICES=1`)
 * a missing binary fails the run instead: a skip must never pass for a test.
 */
export const SERVICES_REQUIRED = process.env.CI === 'true' || process.env.REQUIRE_SERVICES === '1';

export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** Chromium flags for this machine: headless, as root, on a closed network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

/**
 * `describe` when the binary is there; otherwise a loud skip, or, where
 * services are required, a failing test that says what is missing.
 */
export function describeWith(binary: string, title: string, body: () => void): void {
  if (existsSync(binary)) {
    describe(title, body);
    return;
  }
  const why = `${binary} is not installed: "${title}" cannot run (install it: apt-get install ${binary.split('/').pop()})`;
  if (SERVICES_REQUIRED) {
    describe(title, () => {
      it('has the service it needs', () => {
        throw new Error(why);
      });
    });
    return;
  }
  process.stderr.write(`\n*** SKIPPED: ${why} ***\n\n`);
  // biome-ignore lint/suspicious/noSkippedTests: a loud skip on a developer machine only; CI fails instead (above).
  describe.skip(title, body);
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGKILL-free: waits for exit). */
  stop(): Promise<void>;
}

function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output: ${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before it was ready; output: ${seen}`));
    });
  });
}

/** Starts a real redis-server on a free loopback port, in memory only. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await waitForOutput(child, /Ready to accept connections/, 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
