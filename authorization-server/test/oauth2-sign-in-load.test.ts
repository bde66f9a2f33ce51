import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import bcrypt from 'bcryptjs';
import express from 'express';
import supertest from 'supertest';
import { type ApiError, errorHandler, isApiError, notFound } from '../../src/errors/index.js';
import { ALICE, postToken, TEST_COST, TOKEN_PATH, tokenApp } from '../../test/support/oauth2.js';
import { closeServer, listen } from '../../test/support/services.js';
import { waitUntil } from '../../test/support/timing.js';
import { MemoryUserStore, PasswordHasher, passwordSignIn } from '../src/index.js';

/**
 * Sign-in work is bounded (PasswordHasher): a task whose expected wait for a
 * thread exceeds `maxWaitMs` is refused at once with `Retry-After` (429 when
 * the wait is its own key's excess, 503 otherwise), in the door's own error
 * shape; a task whose client went away is dropped unrun; and waiting work is
 * served one key (client address) at a time, so a flood from other
 * addresses delays a real user by a few tasks, not by the whole flood.
 */

const until = waitUntil;

/** The expected wait the pool states: (tasks served before / threads + 0.5) × the average task time. */
const retryAfterFor = (tasksAhead: number, threads: number, averageMs: number) =>
  String(Math.max(1, Math.ceil(((tasksAhead / threads + 0.5) * averageMs) / 1000)));

/** A task that waits, never runs in these tests, and costs nothing if it does. */
const waiting = (hasher: PasswordHasher, key: string) => hasher.verify('x', 'not-a-bcrypt-hash', { key }).catch(() => false);

/** A pool with one thread, its average primed with a cost-10 hash, and its thread then busy with a long hash. */
async function busyPool(maxWaitMs: number): Promise<{ hasher: PasswordHasher; blocker: Promise<unknown> }> {
  const hasher = new PasswordHasher({ threads: 1, cost: 10, maxWaitMs });
  await hasher.hash('prime');
  const blocker = hasher.hash('block', 14).catch(() => undefined);
  await until(() => hasher.stats.running === 1, 'the blocker to run');
  return { hasher, blocker };
}

async function refusalOf(work: Promise<unknown>): Promise<ApiError> {
  try {
    await work;
  } catch (error) {
    if (isApiError(error)) return error;
    throw error;
  }
  throw new Error('the work was not refused');
}

describe('PasswordHasher: a bounded, fair queue', () => {
  describe('when the expected wait exceeds maxWaitMs', () => {
    it('refuses a key’s own excess at once with 429 signInQueueFull and the wait as Retry-After', async () => {
      const { hasher } = await busyPool(1000);
      try {
        const average = hasher.stats.averageTaskMs as number;
        // Admitted while (own queue + 0.5) × average fits the bound.
        const admitted = Math.floor(1000 / average - 0.5) + 1;
        for (let i = 0; i < admitted; i++) void waiting(hasher, 'flooder');
        expect(hasher.stats.queued).toBe(admitted);
        const refusal = await refusalOf(hasher.verify('x', 'not-a-bcrypt-hash', { key: 'flooder' }));
        expect(refusal.status).toBe(429);
        expect(refusal.code).toBe(42902);
        expect(refusal.headers['Retry-After']).toBe(retryAfterFor(admitted, 1, average));
        // Another key would be served in time: it is admitted.
        void waiting(hasher, 'someone-else');
        expect(hasher.stats).toMatchObject({ queued: admitted + 1, refused: 1 });
      } finally {
        await hasher.close();
      }
    });

    it('refuses every new key with 503 signInBusy when even a fresh key would wait too long', async () => {
      const { hasher } = await busyPool(1000);
      try {
        const average = hasher.stats.averageTaskMs as number;
        const keys = Math.floor(1000 / average - 0.5) + 1;
        for (let i = 0; i < keys; i++) void waiting(hasher, `address-${i}`);
        const refusal = await refusalOf(hasher.verify('x', 'not-a-bcrypt-hash', { key: 'newcomer' }));
        expect(refusal.status).toBe(503);
        expect(refusal.code).toBe(50303);
        expect(refusal.headers['Retry-After']).toBe(retryAfterFor(keys, 1, average));
      } finally {
        await hasher.close();
      }
    });
  });

  it('serves waiting keys in turn: one task of a flood, then the other key', async () => {
    const { hasher, blocker } = await busyPool(600_000);
    try {
      const hash = bcrypt.hashSync('right', TEST_COST);
      const order: string[] = [];
      const work = [
        ...Array.from({ length: 5 }, (_, i) =>
          hasher.verify('wrong', hash, { key: 'flood' }).then(() => order.push(`flood-${i}`)),
        ),
        hasher.verify('right', hash, { key: 'user' }).then(() => order.push('user')),
      ];
      await blocker;
      await Promise.all(work);
      expect(order).toEqual(['flood-0', 'user', 'flood-1', 'flood-2', 'flood-3', 'flood-4']);
    } finally {
      await hasher.close();
    }
  }, 60_000);

  it('serves keys without a recent failed comparison before keys with one, and a success clears the mark', async () => {
    const hasher = new PasswordHasher({ threads: 1, cost: 10, maxWaitMs: 600_000 });
    try {
      const hash = bcrypt.hashSync('right', TEST_COST);
      await hasher.verify('wrong', hash, { key: 'guesser' });
      await hasher.verify('wrong', hash, { key: 'typo-then-right' });
      await hasher.verify('right', hash, { key: 'typo-then-right' });
      const blocker = hasher.hash('block', 14).catch(() => undefined);
      await until(() => hasher.stats.running === 1, 'the blocker to run');
      const order: string[] = [];
      const work = [
        ...Array.from({ length: 3 }, (_, i) =>
          hasher.verify('wrong', hash, { key: 'guesser' }).then(() => order.push(`guesser-${i}`)),
        ),
        hasher.verify('right', hash, { key: 'user' }).then(() => order.push('user')),
        hasher.verify('right', hash, { key: 'typo-then-right' }).then(() => order.push('typo-then-right')),
      ];
      await blocker;
      await Promise.all(work);
      expect(order).toEqual(['user', 'typo-then-right', 'guesser-0', 'guesser-1', 'guesser-2']);
    } finally {
      await hasher.close();
    }
  }, 60_000);

  it('drops a waiting task whose signal aborts: rejected with its reason, never run', async () => {
    const { hasher, blocker } = await busyPool(600_000);
    try {
      const completedBefore = hasher.stats.completed;
      const controller = new AbortController();
      const gone = hasher.hash('never hashed', 10, { signal: controller.signal });
      expect(hasher.stats.queued).toBe(1);
      const reason = new Error('client gone');
      controller.abort(reason);
      await expect(gone).rejects.toBe(reason);
      expect(hasher.stats).toMatchObject({ queued: 0, dropped: 1 });
      await blocker;
      // A dropped task that ran anyway would start as the blocker ends, and count as a second completion.
      await until(() => hasher.stats.running === 0, 'the thread to be idle');
      expect(hasher.stats).toMatchObject({ completed: completedBefore + 1, queued: 0, running: 0, dropped: 1 });
    } finally {
      await hasher.close();
    }
  }, 60_000);

  describe('after a load spike on a slow machine', () => {
    /** A pool whose recent average is a spike's: two cost-12 hashes, each longer than the deadline below leaves. */
    async function afterSpike(): Promise<{ hasher: PasswordHasher; spikeTaskMs: number }> {
      const hasher = new PasswordHasher({ threads: 1, cost: TEST_COST, maxWaitMs: 600_000 });
      await Promise.all([hasher.hash('spike', 12), hasher.hash('spike', 12)]);
      return { hasher, spikeTaskMs: hasher.stats.averageTaskMs as number };
    }

    it('runs a check on the idle pool whatever the average says, answered within one of the spike’s task times', async () => {
      const { hasher, spikeTaskMs } = await afterSpike();
      try {
        const hash = bcrypt.hashSync('right', TEST_COST);
        // One task time from now: a busy pool would keep one and a half for the task itself and refuse.
        const started = performance.now();
        await expect(hasher.verify('right', hash, { deadline: started + spikeTaskMs })).resolves.toBe(true);
        expect(performance.now() - started).toBeLessThan(spikeTaskMs);
        expect(hasher.stats.refused).toBe(0);
      } finally {
        await hasher.close();
      }
    }, 60_000);

    it('brings its average down toward what tasks take now', async () => {
      const { hasher, spikeTaskMs } = await afterSpike();
      try {
        const hash = bcrypt.hashSync('right', TEST_COST);
        for (let i = 0; i < 20; i++) await hasher.verify('right', hash, { deadline: performance.now() + spikeTaskMs });
        // 0.8^20 of the spike is left, about a hundredth, plus what cost-4 checks take.
        expect(hasher.stats.averageTaskMs as number).toBeLessThan(spikeTaskMs / 4);
        expect(hasher.stats.refused).toBe(0);
      } finally {
        await hasher.close();
      }
    }, 60_000);

    it('answers a grant again after the spike, where the spike priced the pool out of the sign-in deadline', async () => {
      const { hasher } = await afterSpike();
      try {
        // A 300 ms deadline leaves the pool 270 ms: less than one and a half of the spike's task times.
        const app = await tokenApp({ passwordHasher: hasher, signInDeadlineMs: 300 });
        const res = await postToken(app, ALICE);
        expect(res.status).toBe(200);
        expect(typeof res.body.access_token).toBe('string');
      } finally {
        await hasher.close();
      }
    }, 60_000);
  });

  it('refuses a wrong maxWaitMs at construction', () => {
    expect(() => new PasswordHasher({ maxWaitMs: 50 })).toThrow('`maxWaitMs` must be an integer from 100 to 600000; received 50');
  });
});

describe('sign-in under load, over HTTP', () => {
  describe('a refusal in each door’s own error shape', () => {
    it('answers the token endpoint with 503 temporarily_unavailable and Retry-After (RFC 6749 shape)', async () => {
      const { hasher } = await busyPool(1000);
      try {
        const average = hasher.stats.averageTaskMs as number;
        const keys = Math.floor(1000 / average - 0.5) + 1;
        for (let i = 0; i < keys; i++) void waiting(hasher, `address-${i}`);
        const res = await postToken(await tokenApp({ passwordHasher: hasher }), ALICE);
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe(retryAfterFor(keys, 1, average));
        expect(res.headers.pragma).toBe('no-cache');
        expect(res.body).toEqual({
          error: 'temporarily_unavailable',
          error_description: 'Sign-in is busy; retry after the time in Retry-After.',
        });
      } finally {
        await hasher.close();
      }
    });

    it('answers the token endpoint with 429 too_many_requests when the wait is the address’s own excess', async () => {
      const { hasher } = await busyPool(1000);
      try {
        const average = hasher.stats.averageTaskMs as number;
        const own = Math.floor(1000 / average - 0.5) + 1;
        // supertest connects from 127.0.0.1: that address's own attempts already wait.
        for (let i = 0; i < own; i++) void waiting(hasher, '127.0.0.1');
        const res = await postToken(await tokenApp({ passwordHasher: hasher }), ALICE);
        expect(res.status).toBe(429);
        expect(res.headers['retry-after']).toBe(retryAfterFor(own, 1, average));
        expect(res.body).toEqual({
          error: 'too_many_requests',
          error_description: 'Too many sign-ins at once from this address; retry after Retry-After.',
        });
      } finally {
        await hasher.close();
      }
    });

    it('answers a sign-in form with 503 { errors: [...] } and Retry-After', async () => {
      const { hasher } = await busyPool(1000);
      try {
        const users = new MemoryUserStore();
        await users.add({ username: 'alice', subject: 'u-1', passwordHash: bcrypt.hashSync(ALICE.password, TEST_COST) });
        const checkPassword = passwordSignIn({ users, passwordHasher: hasher, passwordCost: TEST_COST, signInGuard: false });
        const app = express();
        app.post('/v1/sessions', express.json(), async (req, res) => {
          const user = await checkPassword(req, req.body.username, req.body.password);
          res.status(user ? 201 : 401).json({});
        });
        app.use(notFound(), errorHandler({ production: true, log: false }));
        const average = hasher.stats.averageTaskMs as number;
        const keys = Math.floor(1000 / average - 0.5) + 1;
        for (let i = 0; i < keys; i++) void waiting(hasher, `address-${i}`);
        const res = await supertest(app).post('/v1/sessions').send({ username: 'alice', password: ALICE.password });
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe(retryAfterFor(keys, 1, average));
        expect(res.body).toEqual({ errors: [{ message: 'Sign-in is busy; retry after the time in Retry-After.', code: 50303 }] });
      } finally {
        await hasher.close();
      }
    });
  });

  it('drops the hash of a grant whose client disconnects while it waits', async () => {
    const hasher = new PasswordHasher({ threads: 1, cost: 10, maxWaitMs: 600_000 });
    const { server, url } = await listen(await tokenApp({ passwordHasher: hasher }));
    // The average primed with one cost-10 task, then the thread kept busy with a long hash.
    await hasher.hash('prime');
    const blocker = hasher.hash('block', 14).catch(() => undefined);
    try {
      const completedBefore = hasher.stats.completed;
      const body = new URLSearchParams(ALICE).toString();
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      socket.on('error', () => {});
      socket.write(
        `POST ${TOKEN_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await until(() => hasher.stats.queued === 1, 'the grant to wait for the thread');
      socket.destroy();
      await until(() => hasher.stats.dropped === 1, 'the waiting grant to be dropped');
      expect(hasher.stats.queued).toBe(0);
      await blocker;
      await until(() => hasher.stats.running === 0, 'the thread to be idle');
      // Only the blocker ran; the grant never cost a hash.
      expect(hasher.stats).toMatchObject({ completed: completedBefore + 1, running: 0, queued: 0, dropped: 1 });
    } finally {
      await closeServer(server);
      await hasher.close();
    }
  }, 60_000);

  it('serves a correct grant from a 9th address after at most one guess per flooding address, during a 160-grant flood from 8 others', async () => {
    // One thread, cost-8 hashes, and bounds that admit the whole flood: the order of service is what is tested.
    const hasher = new PasswordHasher({ threads: 1, cost: 8, maxWaitMs: 60_000 });
    const users = new MemoryUserStore();
    await users.add({ username: 'alice', subject: 'u-1', passwordHash: await hasher.hash(ALICE.password) });
    const app = await tokenApp({ users, passwordHasher: hasher, passwordCost: 8, signInDeadlineMs: 60_000 });
    const { server, url } = await listen(app);
    const { port } = new URL(url);
    const USER = '127.0.0.10';
    // The order in which the thread takes and finishes comparisons, by key (the client address).
    const events: string[] = [];
    let queuedAhead = -1;
    const verify = hasher.verify.bind(hasher);
    hasher.verify = (password, hash, options) => {
      const key = String(options?.key);
      if (key === USER) queuedAhead = hasher.stats.queued;
      events.push(`queued ${key}`);
      return verify(password, hash, options).finally(() => events.push(`done ${key}`));
    };
    const grant = (localAddress: string, form: Record<string, string>) =>
      new Promise<number>((done, fail) => {
        const body = new URLSearchParams(form).toString();
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: TOKEN_PATH,
            method: 'POST',
            localAddress,
            agent: false,
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => done(res.statusCode ?? 0));
          },
        );
        req.on('error', fail);
        req.end(body);
      });
    try {
      // The average primed with one cost-8 task (else the blocker's time so far would stand for a task and refuse
      // the flood), then the thread kept busy while the flood arrives, so the flood waits ahead of the user.
      await hasher.hash('prime');
      const blocker = hasher.hash('block', 14).catch(() => undefined);
      // Distinct unknown usernames: each address stays far below its allowance of failures.
      const flood = Array.from({ length: 160 }, (_, i) =>
        grant(`127.0.0.${2 + (i % 8)}`, { grant_type: 'password', username: `nobody-${i}`, password: 'guess' }),
      );
      await until(
        () => events.filter((event) => event.startsWith('queued')).length === 160,
        () => `the flood to reach the hasher (${JSON.stringify(hasher.stats)})`,
        100_000,
      );
      expect(await grant(USER, ALICE)).toBe(200);
      expect(queuedAhead).toBeGreaterThan(50);
      const served = events.filter((event) => event.startsWith('done'));
      const before =
        served.indexOf(`done ${USER}`) -
        events.slice(0, events.indexOf(`queued ${USER}`)).filter((e) => e.startsWith('done')).length;
      // At most one waiting guess per flooding address, and the one running, go first; not the flood.
      expect(before).toBeLessThanOrEqual(9);
      await blocker;
      expect(await Promise.all(flood)).toEqual(Array(160).fill(400));
    } finally {
      await closeServer(server);
      await hasher.close();
    }
  }, 120_000);
});
