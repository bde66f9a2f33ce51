// The load generator: Debian's wrk (C, one thread, little CPU of its own,
// which matters on a 2-core machine). Without it: `apt-get install wrk`
// (Debian/Ubuntu) or build it from https://github.com/wg/wrk.
import { execFile, execFileSync } from 'node:child_process';

export const WRK = process.env.WRK ?? 'wrk';

/** The wrk version line, or throws with how to get wrk. */
export function wrkVersion() {
  try {
    return execFileSync(WRK, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .split(' Copyright')[0]
      .trim();
  } catch (error) {
    // wrk --version prints its banner and exits 1.
    const out = `${error.stdout ?? ''}`.split('\n')[0].split(' Copyright')[0].trim();
    if (out.startsWith('wrk')) return out;
    throw new Error(
      `npm run bench needs wrk (the HTTP load generator), which was not found as "${WRK}".\n` +
        '  Debian/Ubuntu: sudo apt-get install wrk\n' +
        '  macOS: brew install wrk\n' +
        '  elsewhere: build it from https://github.com/wg/wrk, or point WRK=/path/to/wrk',
    );
  }
}

const UNIT = { us: 1e-3, ms: 1, s: 1e3 };
const toMs = (value, unit) => Number(value) * UNIT[unit];

/** Parses wrk's `--latency` report. Latencies in ms. */
export function parseWrk(text) {
  const requests = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(text);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const percentile = (p) => {
    const match = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(text);
    return match ? toMs(match[1], match[2]) : Number.NaN;
  };
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  if (!requests || !rps) throw new Error(`wrk: unreadable report:\n${text}`);
  return {
    requests: Number(requests[1]),
    rps: Number(rps[1]),
    p50: percentile(50),
    p99: percentile(99),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

/** One wrk run: 1 thread, `connections` keep-alive connections, `seconds` long. */
export function runWrk(url, { seconds, connections = 50, headers = {} }) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '5s'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile(WRK, args, { encoding: 'utf8', timeout: (seconds + 15) * 1000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`wrk failed: ${error.message}\n${stderr}`));
      try {
        resolve(parseWrk(stdout));
      } catch (parseError) {
        reject(parseError);
      }
    });
  });
}
