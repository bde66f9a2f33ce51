import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createClient, createCluster } from 'redis';
import { ConfigurationError } from '../../src/config/index.js';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent } from '../../src/events/index.js';
import {
  describeWith,
  REDIS_SERVER,
  type RedisCluster,
  type RedisServer,
  startRedis,
  startRedisCluster,
} from '../../test/support/services.js';
import { useFakeDate } from '../../test/support/timing.js';
import {
  DEFAULT_SESSION_TTL_SECONDS,
  describeDevice,
  MemorySessionStore,
  RedisSessionStore,
  type SessionStore,
  type SessionStoreOptions,
} from '../src/index.js';

/**
 * The session store's contract, run on MemorySessionStore and on
 * RedisSessionStore over a real redis-server (and a Redis Cluster): many
 * sessions per user by default, each listed by its public id and ended one
 * by one or all but one; one per user when asked, atomically.
 */

const COOKIE = /^[A-Za-z0-9_-]{43}$/;
const ID = /^[A-Za-z0-9_-]{22}$/;
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

const makeClient = (url: string) => createClient({ url });
type Client = ReturnType<typeof makeClient>;

type MakeStore = (options?: SessionStoreOptions) => SessionStore | Promise<SessionStore>;

/** Everything published on the security channel while `body` runs. */
async function eventsDuring(body: () => Promise<void>): Promise<SecurityEvent[]> {
  const seen: SecurityEvent[] = [];
  const listener = (message: unknown) => seen.push(message as SecurityEvent);
  subscribe(SECURITY_EVENTS_CHANNEL, listener);
  try {
    await body();
  } finally {
    unsubscribe(SECURITY_EVENTS_CHANNEL, listener);
  }
  return seen;
}

let users = 0;
const freshSubject = () => `${process.pid}${Date.now()}${++users}`;

function sessionStoreContract(make: MakeStore): void {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('opens a session: a secret cookie value and a separate public id', async () => {
    const store = await make();
    const subject = freshSubject();
    const { cookie, session } = await store.create(subject, { device: 'Firefox on Linux' });
    expect(cookie).toMatch(COOKIE);
    expect(session.id).toMatch(ID);
    expect(cookie).not.toContain(session.id);
    expect(session).toEqual({
      id: session.id,
      subject,
      createdAt: expect.stringMatching(/Z$/),
      lastSeenAt: session.createdAt,
      expiresAt: new Date(Date.parse(session.createdAt) + DEFAULT_SESSION_TTL_SECONDS * 1000).toISOString(),
      device: 'Firefox on Linux',
    });
    expect(await store.find(cookie)).toEqual(session);
    expect(await store.find('not-a-cookie-of-any-session-at-all-00000000')).toBeUndefined();
  });

  it('keeps every sign-in of a user live, and lists each by its public id', async () => {
    const store = await make();
    const subject = freshSubject();
    const first = await store.create(subject, { device: 'Firefox on Linux' });
    const second = await store.create(subject, { device: 'Safari on iOS' });
    await store.create(freshSubject());
    expect((await store.find(first.cookie))?.id).toBe(first.session.id);
    expect((await store.find(second.cookie))?.id).toBe(second.session.id);
    const listed = await store.list(subject);
    expect(listed).toEqual([
      {
        id: first.session.id,
        createdAt: first.session.createdAt,
        lastSeenAt: first.session.lastSeenAt,
        device: 'Firefox on Linux',
      },
      {
        id: second.session.id,
        createdAt: second.session.createdAt,
        lastSeenAt: second.session.lastSeenAt,
        device: 'Safari on iOS',
      },
    ]);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(first.cookie);
    expect(text).not.toContain(second.cookie);
  });

  it('derives the device from the request User-Agent, and bounds one given', async () => {
    const store = await make();
    const request = { headers: { 'user-agent': FIREFOX_LINUX } } as never;
    expect((await store.create(freshSubject(), { request })).session.device).toBe('Firefox on Linux');
    expect((await store.create(freshSubject(), { device: 'x'.repeat(500) })).session.device).toBe('x'.repeat(64));
  });

  it('ends a session at its ttl: find and list drop it', async () => {
    useFakeDate();
    const store = await make({ ttlSeconds: 60 });
    const subject = freshSubject();
    const { cookie } = await store.create(subject);
    jest.setSystemTime(Date.now() + 59_000);
    expect(await store.find(cookie)).toBeDefined();
    expect(await store.list(subject)).toHaveLength(1);
    jest.setSystemTime(Date.now() + 1_000);
    expect(await store.find(cookie)).toBeUndefined();
    expect(await store.list(subject)).toEqual([]);
  });

  it('moves lastSeenAt at most once a minute', async () => {
    useFakeDate();
    const store = await make();
    const subject = freshSubject();
    const { cookie, session } = await store.create(subject);
    const opened = Date.parse(session.createdAt);
    jest.setSystemTime(opened + 59_000);
    expect((await store.find(cookie))?.lastSeenAt).toBe(session.createdAt);
    jest.setSystemTime(opened + 60_000);
    const seen = new Date(opened + 60_000).toISOString();
    expect((await store.find(cookie))?.lastSeenAt).toBe(seen);
    jest.setSystemTime(opened + 100_000);
    expect((await store.find(cookie))?.lastSeenAt).toBe(seen);
    expect((await store.list(subject))[0]?.lastSeenAt).toBe(seen);
  });

  it('ends one session of its user by id; not another user’s, not an unknown one, not twice', async () => {
    const store = await make();
    const subject = freshSubject();
    const mine = await store.create(subject);
    const other = await store.create(subject);
    const theirs = await store.create(freshSubject());
    expect(await store.end(subject, theirs.session.id)).toBe(false);
    expect(await store.find(theirs.cookie)).toBeDefined();
    expect(await store.end(subject, 'AAAAAAAAAAAAAAAAAAAAAA')).toBe(false);
    expect(await store.end(subject, other.session.id)).toBe(true);
    expect(await store.end(subject, other.session.id)).toBe(false);
    expect(await store.find(other.cookie)).toBeUndefined();
    expect(await store.find(mine.cookie)).toBeDefined();
    expect((await store.list(subject)).map((each) => each.id)).toEqual([mine.session.id]);
  });

  it('ends every session of its user but the current one', async () => {
    const store = await make();
    const subject = freshSubject();
    const [current, a, b] = [await store.create(subject), await store.create(subject), await store.create(subject)];
    const neighbour = await store.create(freshSubject());
    expect(await store.endOthers(subject, current.session.id)).toBe(2);
    for (const ended of [a, b]) expect(await store.find(ended.cookie)).toBeUndefined();
    expect(await store.find(current.cookie)).toBeDefined();
    expect(await store.find(neighbour.cookie)).toBeDefined();
    expect((await store.list(subject)).map((each) => each.id)).toEqual([current.session.id]);
    expect(await store.endOthers(subject, current.session.id)).toBe(0);
  });

  it('signs out by the cookie', async () => {
    const store = await make();
    const subject = freshSubject();
    const { cookie } = await store.create(subject);
    const kept = await store.create(subject);
    expect(await store.endByCookie(cookie)).toBe(true);
    expect(await store.endByCookie(cookie)).toBe(false);
    expect(await store.find(cookie)).toBeUndefined();
    expect(await store.find(kept.cookie)).toBeDefined();
    expect(await store.endByCookie('not-a-cookie')).toBe(false);
  });

  it('with oneSessionPerUser, of parallel sign-ins exactly one stays live', async () => {
    const store = await make({ oneSessionPerUser: true });
    const subject = freshSubject();
    const opened = await Promise.all(Array.from({ length: 12 }, () => store.create(subject)));
    const live = (await Promise.all(opened.map((each) => store.find(each.cookie)))).filter((found) => found !== undefined);
    expect(live).toHaveLength(1);
    expect((await store.list(subject)).map((each) => each.id)).toEqual([live[0]?.id]);
    const later = await store.create(subject);
    expect((await store.list(subject)).map((each) => each.id)).toEqual([later.session.id]);
  });

  it('keeps at most maxSessionsPerUser live: a sign-in beyond it ends the least recently used', async () => {
    useFakeDate();
    const store = await make({ maxSessionsPerUser: 3 });
    const subject = freshSubject();
    const first = await store.create(subject);
    jest.setSystemTime(Date.now() + 1_000);
    const second = await store.create(subject);
    jest.setSystemTime(Date.now() + 1_000);
    const third = await store.create(subject);
    // The first is used again: the second is now the least recently used.
    jest.setSystemTime(Date.now() + 60_000);
    expect(await store.find(first.cookie)).toBeDefined();
    let fourth = third;
    const events = await eventsDuring(async () => {
      fourth = await store.create(subject);
    });
    expect(await store.find(second.cookie)).toBeUndefined();
    expect((await store.list(subject)).map((each) => each.id)).toEqual([first.session.id, third.session.id, fourth.session.id]);
    expect(
      events.filter((event) => event.subject === subject).map((event) => [event.event, event.sessionId, event.description]),
    ).toEqual([
      ['session_expired', second.session.id, 'A session was ended by a new sign-in.'],
      ['session_created', fourth.session.id, expect.any(String)],
    ]);
  });

  it('publishes session_created, session_expired and session_use_after_expire with the public id, never the cookie', async () => {
    const store = await make();
    const subject = freshSubject();
    let cookies: string[] = [];
    let ids: string[] = [];
    const events = await eventsDuring(async () => {
      const one = await store.create(subject, { device: 'Firefox on Linux' });
      const two = await store.create(subject);
      const three = await store.create(subject);
      cookies = [one.cookie, two.cookie, three.cookie];
      ids = [one.session.id, two.session.id, three.session.id];
      await store.end(subject, two.session.id);
      await store.endByCookie(three.cookie);
      await store.find(two.cookie);
    });
    const mine = events.filter((event) => event.subject === subject);
    expect(mine.map((event) => [event.event, event.level, event.outcome, event.sessionId])).toEqual([
      ['session_created', 'INFO', 'success', ids[0]],
      ['session_created', 'INFO', 'success', ids[1]],
      ['session_created', 'INFO', 'success', ids[2]],
      ['session_expired', 'INFO', 'success', ids[1]],
      ['session_expired', 'INFO', 'success', ids[2]],
      ['session_use_after_expire', 'CRITICAL', 'failure', ids[1]],
    ]);
    expect(mine[0]?.description).toBe('A session was opened on Firefox on Linux.');
    expect(mine[3]?.description).toBe('A session was ended by its user.');
    expect(mine[4]?.description).toBe('A session was signed out.');
    const text = JSON.stringify(events);
    for (const cookie of cookies) expect(text).not.toContain(cookie);
  });

  it('refuses wrong options at construction', async () => {
    for (const [options, message] of [
      [{ ttlSeconds: 0 }, /ttlSeconds/],
      [{ ttlSeconds: 1.5 }, /ttlSeconds/],
      [{ ttlSeconds: '3600' }, /ttlSeconds/],
      [{ ttlSeconds: 31 * 86_400 }, /ttlSeconds/],
      [{ oneSessionPerUser: 'yes' }, /oneSessionPerUser/],
      [{ maxSessionsPerUser: 0 }, /maxSessionsPerUser/],
      [{ maxSessionsPerUser: 10_001 }, /maxSessionsPerUser/],
      [{ oneSessionPerUser: true, maxSessionsPerUser: 5 }, /maxSessionsPerUser/],
      [{ oneSessionPerUsr: true }, /oneSessionPerUsr/],
    ] as const) {
      let thrown: unknown;
      try {
        await make(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigurationError);
      expect(String(thrown)).toMatch(message);
    }
  });
}

/**
 * 1,000 sign-ins of one user, every tenth signed out at once: the live
 * sessions stay at maxSessionsPerUser (20 here), and of the sessions that are
 * over (ended by the cap, signed out) only the 10 most recent are kept.
 */
async function thousandSignIns(store: SessionStore, subject: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const { cookie } = await store.create(subject);
    if (i % 10 === 0) expect(await store.endByCookie(cookie)).toBe(true);
  }
  expect(await store.list(subject)).toHaveLength(20);
}

describe('MemorySessionStore', () => {
  sessionStoreContract((options) => new MemorySessionStore(options));

  it('holds one user at 20 live sessions and 10 over after 1,000 sign-ins: an ended session leaves in the step that ends it', async () => {
    const store = new MemorySessionStore({ maxSessionsPerUser: 20 });
    await thousandSignIns(store, freshSubject());
    expect(store.size()).toEqual({ sessions: 30, cookies: 30 });
  });

  it('forgets a session a lifetime after it ended, so memory stays bounded', async () => {
    useFakeDate();
    try {
      const store = new MemorySessionStore({ ttlSeconds: 60 });
      const subject = freshSubject();
      const { cookie } = await store.create(subject);
      const events = await eventsDuring(async () => {
        jest.setSystemTime(Date.now() + 119_000);
        await store.find(cookie);
        jest.setSystemTime(Date.now() + 1_000);
        await store.find(cookie);
      });
      expect(events.map((event) => event.event)).toEqual(['session_use_after_expire']);
    } finally {
      jest.useRealTimers();
    }
  });
});

describeWith(REDIS_SERVER, 'RedisSessionStore on a real redis-server', () => {
  let redis: RedisServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });

  const connect = async () => {
    const client = makeClient(redis.url);
    await client.connect();
    clients.push(client);
    return client;
  };

  // Each store has its own connection, as two instances would.
  sessionStoreContract(async (options) => new RedisSessionStore({ client: await connect(), ...options }));

  it('holds one user at 20 live sessions and 10 over after 1,000 sign-ins: one hash of 30, 30 cookie keys', async () => {
    const client = await connect();
    const store = new RedisSessionStore({ client, prefix: 'thousand:', maxSessionsPerUser: 20 });
    await thousandSignIns(store, freshSubject());
    const keys = await client.keys('thousand:*');
    const hashes = keys.filter((key) => key.startsWith('thousand:sessions:{'));
    expect(hashes).toHaveLength(1);
    expect(await client.hLen(hashes[0] as string)).toBe(30);
    expect(keys.filter((key) => key.startsWith('thousand:session-cookie:'))).toHaveLength(30);
  }, 60_000);

  it('keeps a digest of the cookie value, never the value, and a user’s sessions in one hash slot', async () => {
    const client = await connect();
    const store = new RedisSessionStore({ client, prefix: 'digest-test:' });
    const subject = freshSubject();
    const { cookie, session } = await store.create(subject, { device: 'Chrome on Android' });
    await store.create(subject);
    const keys = await client.keys('digest-test:*');
    expect(keys.filter((key) => key.startsWith('digest-test:sessions:{'))).toHaveLength(1);
    expect(keys.filter((key) => key.startsWith('digest-test:session-cookie:'))).toHaveLength(2);
    for (const key of keys) {
      expect(key).not.toContain(cookie);
      const value = JSON.stringify((await client.type(key)) === 'hash' ? await client.hGetAll(key) : await client.get(key));
      expect(value).not.toContain(cookie);
    }
    expect(JSON.stringify(await client.hGetAll(keys.find((key) => key.includes('sessions:{')) ?? ''))).toContain(session.id);
  });

  it('refuses a missing client', () => {
    expect(() => new RedisSessionStore({} as never)).toThrow(ConfigurationError);
  });
});

describeWith(REDIS_SERVER, 'RedisSessionStore on a three-master Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: ReturnType<typeof createCluster>;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    client = createCluster({ rootNodes: [...cluster.rootNodes] });
    await client.connect();
  }, 60_000);
  afterAll(async () => {
    await client?.quit();
    await cluster?.stop();
  });

  it('opens, lists and ends sessions of users whose keys fall on different nodes', async () => {
    for (const oneSessionPerUser of [false, true]) {
      const store = new RedisSessionStore({ client, oneSessionPerUser });
      for (let user = 0; user < 6; user++) {
        const subject = freshSubject();
        const [a, b] = [await store.create(subject), await store.create(subject)];
        expect(await store.find(b.cookie)).toBeDefined();
        expect((await store.list(subject)).length).toBe(oneSessionPerUser ? 1 : 2);
        if (!oneSessionPerUser) {
          expect(await store.endOthers(subject, b.session.id)).toBe(1);
          expect(await store.find(a.cookie)).toBeUndefined();
        }
        expect(await store.endByCookie(b.cookie)).toBe(true);
        expect(await store.list(subject)).toEqual([]);
      }
    }
  });
});

describe('describeDevice()', () => {
  const cases: [string | undefined, string][] = [
    [FIREFOX_LINUX, 'Firefox on Linux'],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
      'Edge on Windows',
    ],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      'Chrome on macOS',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
      'Safari on iOS',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
      'Chrome on Android',
    ],
    ['curl/8.5.0', 'Unknown device'],
    [undefined, 'Unknown device'],
    [`Linux ${'<script>'.repeat(10_000)}`, 'Unknown browser on Linux'],
  ];
  it.each(cases.map(([userAgent, expected]) => [String(userAgent).slice(0, 40), expected, userAgent]))(
    '%s… → %s',
    (_title, expected, userAgent) => {
      expect(describeDevice(userAgent)).toBe(expected);
    },
  );
});
