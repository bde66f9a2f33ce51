import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitUntil } from './timing.js';

/**
 * Real services for tests: a real redis-server and a real headless Chromium.
 *
 * On a developer's machine without the binary, the suites that need it are
 * skipped with a loud message. In CI (`CI=true`, or `REQUIRE_SERVICES=1`)
 * a missing binary fails the run instead: a skip must never pass for a test.
 */
export const SERVICES_REQUIRED = process.env.CI === 'true' || process.env.REQUIRE_SERVICES === '1';

export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
export const REDIS_CLI = process.env.REDIS_CLI_BIN ?? '/usr/bin/redis-cli';
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

/** Serves `app` on a free loopback port; `url` is its address with `path` after it. */
export async function listen(app: RequestListener, path = ''): Promise<{ server: Server; url: string }> {
  const port = await freePort();
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${port}${path}` };
}

/** Stops a server started by listen(), its keep-alive connections too. */
export const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

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
  /**
   * Freezes the process (SIGSTOP): connections stay open and nothing is
   * answered, as with a black-holed Redis. `resume()` (SIGCONT) thaws it.
   */
  pause(): void;
  resume(): void;
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

/**
 * Starts a real redis-server on a free loopback port (or on `port`, to bring
 * a stopped one back where its clients reconnect), in memory only.
 */
export async function startRedis(options: { port?: number } = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
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
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }),
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
  };
}

const run = promisify(execFile);

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

export interface RedisCluster {
  /** The masters' client ports on 127.0.0.1. */
  readonly ports: readonly number[];
  /** `rootNodes` for node-redis's `createCluster()`. */
  readonly rootNodes: readonly { url: string }[];
  /** The temporary directory of the nodes' config files, removed by `stop()`. */
  readonly dir: string;
  /** Stops every node (waits for each to exit) and removes their directory. */
  stop(): Promise<void>;
}

/**
 * Starts a real Redis Cluster of `masters` masters (no replicas) on free
 * loopback ports: one `redis-server --cluster-enabled yes` per master, each
 * with its own cluster bus port and config file in a temporary directory,
 * joined with `redis-cli --cluster create`, and ready once every node reports
 * `cluster_state:ok`. Whatever fails half-way is stopped and removed. Needs
 * Redis 7 (`--cluster-port`: the bus port is chosen free too, not port + 10000).
 */
export async function startRedisCluster(masters = 3, { password }: { password?: string } = {}): Promise<RedisCluster> {
  // With a password every node requires it (`requirepass`), of clients and of each other (`masterauth`).
  const auth = password === undefined ? [] : ['--requirepass', password, '--masterauth', password];
  const cliAuth = password === undefined ? [] : ['-a', password, '--no-auth-warning'];
  const dir = await mkdtemp(join(tmpdir(), 'eac-redis-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(children.map(stopChild));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      let busPort = await freePort();
      while (busPort === port) busPort = await freePort();
      const child = spawn(
        REDIS_SERVER,
        [
          '--port',
          String(port),
          '--cluster-port',
          String(busPort),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '5000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--protected-mode',
          'yes',
          ...auth,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(child);
      await waitForOutput(child, /Ready to accept connections/, 10_000);
      ports.push(port);
    }
    await run(
      REDIS_CLI,
      [
        ...cliAuth,
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    const deadline = Date.now() + 30_000;
    for (const port of ports) {
      for (;;) {
        const { stdout } = await run(REDIS_CLI, [...cliAuth, '-h', '127.0.0.1', '-p', String(port), 'CLUSTER', 'INFO'], {
          timeout: 5_000,
        });
        if (stdout.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`the cluster did not reach cluster_state:ok on port ${port}: ${stdout}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const userinfo = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
  return { ports, rootNodes: ports.map((port) => ({ url: `redis://${userinfo}127.0.0.1:${port}` })), dir, stop };
}

export const PROMETHEUS = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';

export interface PrometheusServer {
  readonly url: string;
  /** The vector an instant query returns now (`/api/v1/query`), each sample's labels and value. */
  query(expression: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Resolves after Prometheus has scraped every target once more, from now. */
  nextScrape(): Promise<void>;
  /** Stops the server (waits for its exit) and removes its data. */
  stop(): Promise<void>;
}

/** What Prometheus says of its targets (`/api/v1/targets`). */
async function lastScrapes(url: string): Promise<{ health: string; lastScrape: string }[]> {
  const answer = (await (await fetch(`${url}/api/v1/targets`)).json()) as {
    data: { activeTargets: { health: string; lastScrape: string }[] };
  };
  return answer.data.activeTargets;
}

/**
 * Starts a real Prometheus (Debian's `prometheus`) on a free loopback port,
 * scraping `targets` (`host:port`, path /metrics) every `scrapeMs`, its
 * database in a temporary directory. Ready once every target was scraped up.
 */
export async function startPrometheus(targets: readonly string[], scrapeMs = 500): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'eac-prometheus-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = [
    'global:',
    `  scrape_interval: ${scrapeMs}ms`,
    `  scrape_timeout: ${scrapeMs}ms`,
    'scrape_configs:',
    '  - job_name: service',
    '    static_configs:',
    `      - targets: [${targets.map((target) => `'${target}'`).join(', ')}]`,
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const stop = async (): Promise<void> => {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
  };
  const up = async (): Promise<boolean> => {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${output}`);
    const scrapes = await lastScrapes(url).catch(() => []);
    return scrapes.length === targets.length && scrapes.every((target) => target.health === 'up');
  };
  try {
    await waitUntil(up, () => `prometheus to scrape ${targets.join(', ')}; its output: ${output}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    async query(expression) {
      const answer = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`)).json()) as {
        status: string;
        error?: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (answer.status !== 'success') throw new Error(`${expression}: ${answer.error}`);
      return answer.data.result.map(({ metric, value }) => ({ metric, value: Number(value[1]) }));
    },
    async nextScrape() {
      const after = Date.now();
      await waitUntil(
        async () => (await lastScrapes(url)).every((target) => Date.parse(target.lastScrape) > after),
        'the next scrape',
      );
    },
    stop,
  };
}
