import { createHash } from 'node:crypto';
import type { RedisConnection } from './connection.js';

// The layer wraps the client's error; NOSCRIPT is the reply Redis gives for an unknown digest.
const isNoScript = (error: unknown): boolean => {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  return cause instanceof Error && cause.message.startsWith('NOSCRIPT');
};

/**
 * A Lua script run by its SHA-1 (EVALSHA sends only the digest), loaded with
 * EVAL where Redis does not know it yet: a fresh or restarted Redis, a
 * SCRIPT FLUSH, or, on a cluster, each node the first time a key of its
 * slots is touched.
 *
 * Redis runs a script alone, so a read-check-write in one script is atomic
 * across every instance. On a cluster a script runs on one node: every key
 * it touches must be passed in `keys` and share one hash slot (the stores
 * name such keys with one hash tag, see keys.ts); a key computed inside the
 * script would not be routed and is not allowed.
 */
export class RedisScript {
  readonly source: string;
  readonly sha: string;

  constructor(source: string) {
    this.source = source;
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script over `keys` (they share one hash slot) with `args`; `keyCount` is `String(keys.length)`, when the caller keeps it. */
  async run(
    connection: RedisConnection,
    keys: readonly [string, ...string[]],
    args: readonly string[],
    keyCount = String(keys.length),
  ): Promise<unknown> {
    // One array, written in place: no spread of the keys and arguments per call.
    const command: string[] = ['EVALSHA', this.sha, keyCount];
    for (const key of keys) command.push(key);
    for (const arg of args) command.push(arg);
    try {
      return await connection.send(keys[0], command);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      command[0] = 'EVAL';
      command[1] = this.source;
      return connection.send(keys[0], command);
    }
  }
}

/** A reply as text: node-redis answers bulk strings as strings (or Buffers when asked). */
export const replyText = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
