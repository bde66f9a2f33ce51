// Redis for the bench: a redis-server (or a three-master Redis Cluster) of
// its own on free loopback ports, in memory only, and the node-redis client
// a bench app connects with: BENCH_REDIS_CLUSTER (comma-separated master
// URLs) when set, else BENCH_REDIS (one URL).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient, createCluster } from 'redis';

export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
const REDIS_CLI = process.env.REDIS_CLI_BIN ?? '/usr/bin/redis-cli';
const run = promisify(execFile);

/** The bench app's client, connected: a cluster client when BENCH_REDIS_CLUSTER is set. */
export async function connectRedis() {
  const cluster = process.env.BENCH_REDIS_CLUSTER;
  const client = cluster
    ? createCluster({ rootNodes: cluster.split(',').map((url) => ({ url })) })
    : createClient({ url: process.env.BENCH_REDIS ?? 'redis://127.0.0.1:6379' });
  client.on('error', (error) => process.stderr.write(`bench redis client: ${error.message}\n`));
  await client.connect();
  return client;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function startNode(args) {
  const child = spawn(REDIS_SERVER, [...args, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`redis-server not ready: ${seen}`)), 10_000);
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      if (/Ready to accept connections/.test(seen)) {
        clearTimeout(timer);
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${seen}`)));
  });
}

const stopNode = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

/** One redis-server on a free port: `{ url, stop() }`. */
export async function startRedis() {
  const port = await freePort();
  const child = await startNode(['--port', String(port)]);
  return { url: `redis://127.0.0.1:${port}`, stop: () => stopNode(child) };
}

/** A Redis Cluster of `masters` masters, no replicas: `{ urls, stop() }`. */
export async function startRedisCluster(masters = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'eac-bench-cluster-'));
  const children = [];
  const stop = async () => {
    await Promise.all(children.map(stopNode));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = [];
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      let bus = await freePort();
      while (bus === port) bus = await freePort();
      const nodeArgs = ['--port', String(port), '--cluster-port', String(bus), '--cluster-enabled', 'yes'];
      nodeArgs.push('--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir);
      children.push(await startNode(nodeArgs));
      ports.push(port);
    }
    const nodes = ports.map((port) => `127.0.0.1:${port}`);
    await run(REDIS_CLI, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 });
    for (const port of ports) {
      for (let tries = 0; ; tries++) {
        const { stdout } = await run(REDIS_CLI, ['-p', String(port), 'CLUSTER', 'INFO'], { timeout: 5_000 });
        if (stdout.includes('cluster_state:ok')) break;
        if (tries > 300) throw new Error(`cluster not ok on ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return { urls: ports.map((port) => `redis://127.0.0.1:${port}`), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
