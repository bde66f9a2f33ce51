import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { scanLoggedLines } from '../support/event-scan.js';
import { freePort, REDIS_SERVER } from '../support/services.js';

/**
 * The black-box harness: the reference server as a real process, started the
 * way `npm start` starts it (`node examples/server/dist/main.js`, settings in
 * the environment), on a free loopback port, spoken to over real HTTP.
 */

const ROOT = resolve(__dirname, '..', '..');
const MAIN = join(ROOT, 'examples', 'server', 'dist', 'main.js');
const BROWSER_ORIGIN = join(ROOT, 'examples', 'server', 'dist', 'browser-origin.js');
const LOCK = join(ROOT, '.tmp', 'reference-server-build.lock');

const newest = (dir: string): number => {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
};

const builtAt = (file: string): number => (existsSync(file) ? statSync(file).mtimeMs : 0);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Builds the package and the server when their sources are newer than the
 * build (as `npm start` would), once, even with several test files asking at
 * the same time: the first takes a lock, the others wait for it.
 */
export async function ensureBuilt(): Promise<void> {
  const library = join(ROOT, 'dist', 'esm', 'index.js');
  const libraryStale = () =>
    builtAt(library) < newest(join(ROOT, 'src')) || builtAt(join(ROOT, 'dist', 'cjs', 'index.js')) < newest(join(ROOT, 'src'));
  // The authorization server package, which the server imports from its dist (as a team would).
  const tokenPackage = join(ROOT, 'authorization-server');
  const tokenPackageBuilt = join(tokenPackage, 'dist', 'cjs', 'index.js');
  const tokenPackageStale = () => builtAt(tokenPackageBuilt) < Math.max(newest(join(tokenPackage, 'src')), builtAt(library));
  const serverStale = () =>
    builtAt(MAIN) < Math.max(newest(join(ROOT, 'examples', 'server', 'src')), builtAt(library), builtAt(tokenPackageBuilt));
  for (let waited = 0; libraryStale() || tokenPackageStale() || serverStale(); waited += 200) {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    try {
      mkdirSync(LOCK);
    } catch {
      // A lock left by a run that was killed mid-build is taken over after two minutes.
      if (Date.now() - builtAt(LOCK) > 120_000) rmSync(LOCK, { recursive: true, force: true });
      if (waited > 180_000) throw new Error(`waited 3 minutes for another build (remove ${LOCK} if none runs)`);
      await sleep(200);
      continue;
    }
    try {
      if (libraryStale()) execFileSync('node', ['scripts/build.mjs'], { cwd: ROOT, stdio: 'pipe' });
      if (tokenPackageStale()) execFileSync('node', ['scripts/build.mjs'], { cwd: tokenPackage, stdio: 'pipe' });
      if (serverStale()) execFileSync('npx', ['tsc', '-p', 'examples/server/tsconfig.json'], { cwd: ROOT, stdio: 'pipe' });
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

export interface RunningProcess {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves with the exit code when the process ends. */
  readonly exited: Promise<number | null>;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
}

/** The defaults of the contract, except the port, which is always a free one. */
export type ServerEnvironment = Readonly<Record<string, string>>;

/**
 * bcrypt cost 4 instead of the server's 12, unless a test sets it: the
 * tests sign in often, and cost 12 takes a quarter second per password on
 * a small machine. The oauth2 module's own tests prove the default cost.
 */
const FAST_PASSWORDS = { PASSWORD_COST: '4' };

function spawnNode(
  script: string,
  env: ServerEnvironment,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    // Only what the test gives, plus PATH: no setting leaks in from the developer's shell.
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  // The server's event log (LOG_EVENTS) joins the whole-suite scan of security events, line by line.
  let unscanned = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
    unscanned = scanLoggedLines(unscanned + chunk.toString(), `logged by ${script.replace(/^.*[/\\]/, '')}`);
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, output: () => seen, exited };
}

async function waitForListening(output: () => string, exited: Promise<number | null>, pattern: RegExp): Promise<void> {
  let ended: number | null | undefined;
  void exited.then((code) => {
    ended = code;
  });
  for (let waited = 0; waited < 20_000; waited += 25) {
    if (pattern.test(output())) return;
    if (ended !== undefined) throw new Error(`the server exited with ${ended} before it listened:\n${output()}`);
    await sleep(25);
  }
  throw new Error(`the server did not listen within 20 s:\n${output()}`);
}

async function run(script: string, env: ServerEnvironment, pattern: RegExp, portVariable = 'PORT'): Promise<RunningProcess> {
  await ensureBuilt();
  const port = env[portVariable] ? Number(env[portVariable]) : await freePort();
  const { child, output, exited } = spawnNode(script, { ...FAST_PASSWORDS, ...env, [portVariable]: String(port) });
  await waitForListening(output, exited, pattern);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Starts the reference server with `env` as its whole environment (plus a free PORT). */
export function startServer(env: ServerEnvironment = {}): Promise<RunningProcess> {
  return run(MAIN, env, /listening on http:\/\//);
}

/** Starts the browser page's own origin (examples/browser) on a free port. */
export function startBrowserOrigin(env: ServerEnvironment = {}): Promise<RunningProcess> {
  return run(BROWSER_ORIGIN, env, /browser page on http:\/\//, 'BROWSER_PORT');
}

/** Runs the server with settings that must stop it: resolves with its exit code and output. */
export async function startFailure(env: ServerEnvironment): Promise<{ code: number | null; output: string }> {
  await ensureBuilt();
  const { output, exited } = spawnNode(MAIN, { PORT: String(await freePort()), ...FAST_PASSWORDS, ...env });
  const code = await exited;
  return { code, output: output() };
}

/** A redis-server the test can pause, stop and start again on the same port. */
export interface ControlledRedis {
  readonly url: string;
  readonly port: number;
  /** SIGSTOP: the connections stay open, nothing is answered (a hung Redis). */
  pause(): void;
  /** SIGCONT: answers again, queued commands included. */
  resume(): void;
  /** Stops it (SIGTERM, nothing saved) and waits for the exit. */
  stop(): Promise<void>;
  /** Starts it again, empty, on the same port. */
  restart(): Promise<void>;
}

function spawnRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${seen}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (/Ready to accept connections/.test(seen)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${seen}`));
    });
  });
}

/** A real redis-server on a free loopback port, in memory only, under the test's control. */
export async function startControlledRedis(): Promise<ControlledRedis> {
  const port = await freePort();
  let child = await spawnRedis(port);
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      // A paused process takes SIGTERM only once it runs again.
      child.kill('SIGCONT');
      child.kill('SIGTERM');
    });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop,
    restart: async () => {
      await stop();
      child = await spawnRedis(port);
    },
  };
}
