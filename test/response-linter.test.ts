import express, { type Express } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { errorHandler } from '../src/errors/index.js';
import { idPair, jsonResponses, sendJsonText } from '../src/json/index.js';
import { type ResponseLinterOptions, type ResponseLintReport, responseLinter } from '../src/lint/index.js';
import { type ConventionsMiddleware, conventions } from '../src/preset.js';
import { sendList } from '../src/request/index.js';

type ExpressFactory = () => Express;

const GOOD_USER = {
  ...idPair(9007199254740993n),
  name: 'Ada',
  gender: 'female',
  createdAt: '2026-01-31T09:30:00Z',
  updatedAt: '2026-02-01T10:00:00.123+02:00',
};

const build = (factory: ExpressFactory, options: ResponseLinterOptions, body: unknown, path = '/v1/users/1'): Express => {
  const app = factory();
  app.use(jsonResponses(), responseLinter(options));
  app.get(path, (_req, res) => {
    res.json(body);
  });
  app.use(errorHandler({ production: false, log: false }));
  return app;
};

const reportsOf = async (
  body: unknown,
  path = '/v1/users/1',
  factory: ExpressFactory = express,
): Promise<ResponseLintReport[]> => {
  const log = jest.fn();
  await request(build(factory, { log }, body, path.replace(/\?.*/, ''))).get(path);
  return log.mock.calls.map((call) => call[0] as ResponseLintReport);
};

const findingsOf = async (body: unknown, path?: string) => (await reportsOf(body, path))[0]?.findings ?? [];

describe('responseLinter()', () => {
  describe('a body that follows every convention', () => {
    it('is sent unchanged and nothing is reported', async () => {
      const log = jest.fn();
      const res = await request(build(express, { log, strict: true }, GOOD_USER)).get('/v1/users/1');
      expect(res.status).toBe(200);
      expect(res.text).toBe(
        '{"id":9007199254740993,"id_str":"9007199254740993","name":"Ada","gender":"female","createdAt":"2026-01-31T09:30:00Z","updatedAt":"2026-02-01T10:00:00.123+02:00"}',
      );
      expect(log).not.toHaveBeenCalled();
    });

    it('accepts the token endpoint fields rule 13.4 names in snake_case', async () => {
      const token = { access_token: 'a', token_type: 'bearer', expires_in: 3600, refresh_token: 'r' };
      expect(await findingsOf(token, '/v1/oauth2/token')).toEqual([]);
      expect(await findingsOf({ error: 'invalid_token', error_description: 'expired' }, '/v1/oauth2/token')).toEqual([]);
    });
  });

  describe('Key case: camelCase', () => {
    it('reports snake_case and PascalCase keys, with the camelCase to write', async () => {
      expect(await findingsOf({ first_name: 'Ada', LastName: 'L', address: { zip_code: '1' } })).toEqual([
        { path: 'LastName', rule: 'camelCase', message: '"LastName" is not camelCase; write "lastName".' },
        { path: 'address.zip_code', rule: 'camelCase', message: '"zip_code" is not camelCase; write "zipCode".' },
        { path: 'first_name', rule: 'camelCase', message: '"first_name" is not camelCase; write "firstName".' },
      ]);
    });

    it('accepts a <key>_str sibling only next to its key', async () => {
      expect(await findingsOf({ id: 1, id_str: '1' })).toEqual([]);
      expect(await findingsOf({ other_str: '1' })).toEqual([
        { path: 'other_str', rule: 'camelCase', message: '"other_str" is not camelCase; write "otherStr".' },
      ]);
    });

    it('accepts keys the options allow', async () => {
      const log = jest.fn();
      await request(build(express, { log, allowKeys: ['legacy_key'] }, { legacy_key: 1 })).get('/v1/users/1');
      expect(log).not.toHaveBeenCalled();
    });
  });

  describe('Key naming: timestamps and the resource name', () => {
    it('reports a timestamp whose key lacks the At suffix', async () => {
      expect(await findingsOf({ created: '2026-01-31T09:30:00Z', modifiedDate: '2026-01-31T09:30:00Z' })).toEqual([
        {
          path: 'created',
          rule: 'timestampSuffix',
          message: '"created" holds a timestamp; timestamp keys end in "At", such as "createdAt".',
        },
        {
          path: 'modifiedDate',
          rule: 'timestampSuffix',
          message: '"modifiedDate" holds a timestamp; timestamp keys end in "At", such as "modifiedAt".',
        },
      ]);
    });

    it('reports a key that repeats the resource name of the path', async () => {
      expect(await findingsOf({ userName: 'Ada', name: 'Ada' }, '/v1/users/1')).toEqual([
        { path: 'userName', rule: 'resourcePrefix', message: '"userName" repeats the resource name "user"; write "name".' },
      ]);
      expect(await findingsOf({ userProfileId: 1 }, '/v1/user-profiles?limit=1')).toEqual([
        {
          path: 'userProfileId',
          rule: 'resourcePrefix',
          message: '"userProfileId" repeats the resource name "userProfile"; write "id".',
        },
      ]);
    });

    it('reads the resource of a search or of a sub-collection', async () => {
      expect(await findingsOf({ users: [{ userEmail: 'a' }], hasNext: false }, '/v1/users/search')).toEqual([
        {
          path: 'users[].userEmail',
          rule: 'resourcePrefix',
          message: '"userEmail" repeats the resource name "user"; write "email".',
        },
      ]);
      expect(await findingsOf({ orderTotal: 1, userName: 'x' }, '/v1/users/1/orders')).toEqual([
        { path: 'orderTotal', rule: 'resourcePrefix', message: '"orderTotal" repeats the resource name "order"; write "total".' },
      ]);
    });
  });

  describe('Date-time: RFC 3339', () => {
    it('reports a date-time without an offset, and a number for a time', async () => {
      expect(await findingsOf({ createdAt: '2026-01-31T09:30:00', updatedAt: 1767000000 })).toEqual([
        {
          path: 'createdAt',
          rule: 'dateTime',
          message: '"createdAt" is "2026-01-31T09:30:00"; write an RFC 3339 date-time such as 2026-01-31T09:30:00Z.',
        },
        {
          path: 'updatedAt',
          rule: 'dateTime',
          message: '"updatedAt" is the number 1767000000; write the time as an RFC 3339 string such as 2026-01-31T09:30:00Z.',
        },
      ]);
    });
  });

  describe('Gender', () => {
    it.each([['other'], ['MALE'], [null], [1]])('reports gender %j', async (value) => {
      expect(await findingsOf({ gender: value })).toEqual([
        { path: 'gender', rule: 'gender', message: `"gender" is ${JSON.stringify(value)}; its value is "male" or "female".` },
      ]);
    });
  });

  describe('Large integers', () => {
    it('reports an integer beyond 2^53 without a matching _str sibling', async () => {
      expect(await findingsOf({ id: 2n ** 60n, total: 2n ** 60n, total_str: '5' })).toEqual([
        {
          path: 'id',
          rule: 'largeInteger',
          message: '"id" is an integer beyond 2^53; add "id_str" with the same digits as a string.',
        },
        {
          path: 'total',
          rule: 'largeInteger',
          message: '"total" is an integer beyond 2^53; add "total_str" with the same digits as a string.',
        },
      ]);
    });

    it('reports one in an array, which cannot have a sibling', async () => {
      expect(await findingsOf({ ids: [1, 2n ** 60n] })).toEqual([
        {
          path: 'ids[]',
          rule: 'largeInteger',
          message:
            '"ids" holds an integer beyond 2^53 (1152921504606847000) that cannot have a string sibling; send it as an object with id and id_str.',
        },
      ]);
    });
  });

  describe('Paging flag', () => {
    it('reports a list result without a boolean hasNext', async () => {
      const paging = {
        path: 'hasNext',
        rule: 'pagingFlag',
        message: 'This list result has no boolean "hasNext"; say whether more results follow.',
      };
      expect(await findingsOf({ users: [] }, '/v1/users')).toEqual([paging]);
      expect(await findingsOf({ users: [], hasNext: 'no' }, '/v1/users/search?q=a')).toEqual([paging]);
      expect(await findingsOf({ orders: [] }, '/v1/users/1/orders')).toEqual([paging]);
    });

    it('does not ask it of an error answer on a list path (NestJS writes `{ "message": [...] }`)', async () => {
      const log = jest.fn();
      const app = express();
      app.use(jsonResponses(), responseLinter({ log }));
      app.get('/v1/users', (_req, res) => {
        res.status(400).json({ statusCode: 400, message: ['name must be a string'], error: 'Bad Request' });
      });
      await request(app).get('/v1/users').expect(400);
      expect(log.mock.calls.flatMap((call) => (call[0] as ResponseLintReport).findings)).not.toContainEqual(
        expect.objectContaining({ rule: 'pagingFlag' }),
      );
    });

    it('does not ask it of one resource that holds an array', async () => {
      expect(await findingsOf({ id: 1, users: [] }, '/v1/exports/1')).toEqual([]);
    });
  });

  describe('Top-level value', () => {
    it('reports a top-level array sent as JSON text', async () => {
      const log = jest.fn();
      const app = express();
      app.use(responseLinter({ log }));
      app.get('/v1/users', (_req, res) => {
        sendJsonText(res, '[1,2]');
      });
      await request(app).get('/v1/users');
      expect(log).toHaveBeenCalledWith({
        method: 'GET',
        path: '/v1/users',
        status: 200,
        findings: [{ path: '', rule: 'topLevelObject', message: 'The body is an array; send an object.' }],
      });
    });
  });

  describe('lists', () => {
    it('reports a finding of every item once, and sees bodies sent by sendList()', async () => {
      const log = jest.fn();
      const app = express();
      app.use(responseLinter({ log }));
      app.get('/v1/users', (_req, res) => {
        sendList(res, 'users', { items: [{ user_id: 1 }, { user_id: 2 }], hasNext: false });
      });
      await request(app).get('/v1/users?limit=2');
      expect(log.mock.calls).toEqual([
        [
          {
            method: 'GET',
            path: '/v1/users',
            status: 200,
            findings: [{ path: 'users[].user_id', rule: 'camelCase', message: '"user_id" is not camelCase; write "userId".' }],
          },
        ],
      ]);
    });
  });

  describe.each([
    ['Express 5', express as ExpressFactory],
    ['Express 4', express4 as unknown as ExpressFactory],
  ])('strict mode on %s', (_name, factory) => {
    it('fails the response loudly with 500 and the findings', async () => {
      const log = jest.fn();
      const res = await request(build(factory, { strict: true, log }, { user_name: 'Ada' })).get('/v1/users/1');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        errors: [
          {
            message: 'The response body breaks the API conventions (responseLinter strict mode).',
            code: 50002,
            detail: [{ path: 'user_name', rule: 'camelCase', message: '"user_name" is not camelCase; write "userName".' }],
          },
        ],
      });
      expect(log).toHaveBeenCalledTimes(1);
    });

    it('sends the body unchanged when not strict, and reports it', async () => {
      const log = jest.fn();
      const res = await request(build(factory, { log }, { user_name: 'Ada' })).get('/v1/users/1');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ user_name: 'Ada' });
      expect(log).toHaveBeenCalledWith({
        method: 'GET',
        path: '/v1/users/1',
        status: 200,
        findings: [{ path: 'user_name', rule: 'camelCase', message: '"user_name" is not camelCase; write "userName".' }],
      });
    });
  });

  describe('the same write path as production', () => {
    it('observes the body through the JSON writer without replacing res.send()', async () => {
      const log = jest.fn();
      const app = express();
      app.use(jsonResponses(), responseLinter({ log }));
      let sendReplaced: boolean | undefined;
      app.get('/v1/users/1', (_req, res) => {
        sendReplaced = Object.hasOwn(res, 'send');
        res.json({ user_name: 'Ada' });
      });
      const res = await request(app).get('/v1/users/1');
      expect(res.body).toEqual({ user_name: 'Ada' });
      expect(sendReplaced).toBe(false);
      expect(log).toHaveBeenCalledTimes(1);
    });

    it('a tagged 200 answers 304 with the linter on, as without it', async () => {
      const tagsOf = async (options: Parameters<typeof conventions>[0]) => {
        const app = express();
        app.use(conventions(options));
        app.get('/v1/users/1', (_req, res) => {
          res.json({ name: 'Ada' });
        });
        const first = await request(app).get('/v1/users/1');
        const again = await request(app)
          .get('/v1/users/1')
          .set('If-None-Match', first.headers.etag as string);
        return [first.status, first.headers.etag, again.status, again.text];
      };
      const linted = await tagsOf({ responseLinter: { strict: true } });
      expect(linted).toEqual(await tagsOf({ responseLinter: false }));
      expect(linted).toEqual([200, expect.stringMatching(/^"[A-Za-z0-9_-]{27}"$/), 304, '']);
    });
  });

  it('does not read bodies that are not JSON', async () => {
    const log = jest.fn();
    const app = express();
    app.use(responseLinter({ log, strict: true }));
    app.get('/v1/pages', (_req, res) => {
      res.type('text/plain').send('user_name');
    });
    const res = await request(app).get('/v1/pages');
    expect(res.text).toBe('user_name');
    expect(log).not.toHaveBeenCalled();
  });

  describe('options', () => {
    it.each([
      [{ strict: 'yes' }, '`strict` must be true or false; received "yes".'],
      [{ log: console }, '`log` must be a function'],
      [{ allowKeys: 'a_b' }, '`allowKeys` must be an array of key names; received "a_b".'],
      [{ strcit: true }, 'Did you mean `strict`?'],
    ])('refuses %j at start-up', (options, message) => {
      expect(() => responseLinter(options as never)).toThrow(ConfigurationError);
      expect(() => responseLinter(options as never)).toThrow(message);
    });
  });
});

describe('responseLinter() in conventions()', () => {
  const environment = process.env.NODE_ENV;
  afterEach(() => {
    process.env.NODE_ENV = environment;
  });
  // conventions() is one middleware; `modules` lists what it runs.
  const names = (preset: ConventionsMiddleware[]) =>
    preset.flatMap((middleware) => middleware.modules).map((handler) => handler.name);

  it('is in the preset by default outside production', () => {
    process.env.NODE_ENV = 'development';
    expect(names(conventions())).toContain('responseLinterMiddleware');
  });

  it('is left out in production: zero cost', () => {
    process.env.NODE_ENV = 'production';
    expect(names(conventions())).not.toContain('responseLinterMiddleware');
  });

  it('is in production only when options are given', () => {
    process.env.NODE_ENV = 'production';
    expect(names(conventions({ responseLinter: { strict: false } }))).toContain('responseLinterMiddleware');
  });

  it('is left out when false', () => {
    process.env.NODE_ENV = 'development';
    expect(names(conventions({ responseLinter: false }))).not.toContain('responseLinterMiddleware');
  });

  it('checks the bodies of an app using the preset', async () => {
    process.env.NODE_ENV = 'development';
    const log = jest.fn();
    const app = express();
    app.use(conventions({ responseLinter: { strict: true, log } }));
    app.get('/v1/users/:id', (_req, res) => {
      res.json({ gender: 'unknown' });
    });
    app.use(errorHandler({ production: true, log: false }));
    const res = await request(app).get('/v1/users/1');
    expect(res.status).toBe(500);
    expect(log).toHaveBeenCalledTimes(1);
  });
});
