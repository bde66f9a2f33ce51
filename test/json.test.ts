import request from 'supertest';
import { errorHandler } from '../src/errors/index.js';
import { idPair, JsonInteger, jsonResponses, stringifyJson } from '../src/json/index.js';
import { appWith, expectHeaders } from './helpers.js';

describe('stringifyJson', () => {
  describe('escaping (section 9)', () => {
    it('writes < and > as \\u003C and \\u003E in values and keys', () => {
      expect(stringifyJson({ '<k>': '<script>alert(1)</script>' })).toBe(
        '{"\\u003Ck\\u003E":"\\u003Cscript\\u003Ealert(1)\\u003C/script\\u003E"}',
      );
    });

    it('still escapes double quote, backslash and control characters', () => {
      expect(stringifyJson({ s: 'a"b\\c\n\u0001' })).toBe('{"s":"a\\"b\\\\c\\n\\u0001"}');
    });

    it('leaves text without < and > exactly as JSON.stringify writes it', () => {
      const value = { name: 'Ada', tags: ['x', 'y'], n: 1.5, ok: true, none: null };
      expect(stringifyJson(value)).toBe(JSON.stringify(value));
    });

    it('escapes every sign of a run that mixes and repeats them, leaving the text between as it was', () => {
      expect(stringifyJson({ s: '>><<a<b>c>', t: 'x<' })).toBe(
        '{"s":"\\u003E\\u003E\\u003C\\u003Ca\\u003Cb\\u003Ec\\u003E","t":"x\\u003C"}',
      );
    });

    it('parses back to the same value', () => {
      const value = { html: '<b>&</b>', nested: { list: ['<', '>'] } };
      expect(JSON.parse(stringifyJson(value))).toEqual(value);
    });
  });

  describe('large integers (rule 2.9)', () => {
    it('writes a bigint as the exact integer, not a string and not rounded', () => {
      expect(stringifyJson({ id: 9007199254740993n })).toBe('{"id":9007199254740993}');
    });

    it('writes the largest 64-bit values exactly, negative ones too', () => {
      expect(stringifyJson({ max: 18446744073709551615n, min: -9223372036854775808n })).toBe(
        '{"max":18446744073709551615,"min":-9223372036854775808}',
      );
    });

    it('writes bigints nested in arrays and objects', () => {
      expect(stringifyJson({ list: [{ id: 2n ** 63n }, 5n] })).toBe('{"list":[{"id":9223372036854775808},5]}');
    });

    it('leaves a string that merely looks like a number a string', () => {
      expect(stringifyJson({ id: 1n, note: '12345678901234567890' })).toBe('{"id":1,"note":"12345678901234567890"}');
    });

    describe('a bigint among the top-level values (written without the replacer pass)', () => {
      it('keeps the keys in their order, whatever the types around the bigint', () => {
        const value = { a: '<x>', id: 2n ** 64n, n: 1.5, list: [3n], when: new Date(0), z: null };
        expect(stringifyJson(value)).toBe(
          '{"a":"\\u003Cx\\u003E","id":18446744073709551616,"n":1.5,"list":[3],"when":"1970-01-01T00:00:00.000Z","z":null}',
        );
      });

      it('writes no inherited key and no symbol key, as JSON.stringify does', () => {
        const value = Object.create({ inherited: 7n, other: 'x' }) as Record<string | symbol, unknown>;
        value.id = 9007199254740993n;
        value[Symbol('s')] = 1n;
        expect(stringifyJson(value)).toBe('{"id":9007199254740993}');
      });

      it('writes what an own getter returns, and skips a non-enumerable key', () => {
        const value = { id: 1n };
        Object.defineProperty(value, 'big', { get: () => 2n ** 63n, enumerable: true });
        Object.defineProperty(value, 'hidden', { value: 3n, enumerable: false });
        expect(stringifyJson(value)).toBe('{"id":1,"big":9223372036854775808}');
      });

      it("calls the object's own toJSON instead of reading its keys", () => {
        const value = { id: 1n, toJSON: () => ({ id: 2n ** 60n }) };
        expect(stringifyJson(value)).toBe('{"id":1152921504606846976}');
      });

      it('writes many top-level bigints and idPair() ids together exactly', () => {
        const value: Record<string, unknown> = { ...idPair(2n ** 63n) };
        for (let i = 0; i < 10; i++) value[`k${i}`] = 2n ** 60n + BigInt(i);
        const expected = Object.entries(value)
          .map(([key, item]) => `"${key}":${key === 'id_str' ? `"${item}"` : String(item)}`)
          .join(',');
        expect(stringifyJson(value)).toBe(`{${expected}}`);
      });

      it('does not change the object it was given', () => {
        const value = { id: 2n ** 60n };
        stringifyJson(value);
        expect(value).toEqual({ id: 2n ** 60n });
      });
    });

    describe('bigints below the top level (a marked copy through JSON.stringify)', () => {
      it('writes them in lists of objects, sharing nothing with the given value', () => {
        const value = {
          users: [
            { id: 2n ** 63n, name: 'a' },
            { id: 1, name: '<b>' },
          ],
          next: [[7n]],
        };
        expect(stringifyJson(value)).toBe(
          '{"users":[{"id":9223372036854775808,"name":"a"},{"id":1,"name":"\\u003Cb\\u003E"}],"next":[[7]]}',
        );
        expect(value.users[0]).toEqual({ id: 2n ** 63n, name: 'a' });
      });

      it('writes holes as null, skips inherited keys, and calls nested toJSON methods', () => {
        class Row {
          constructor(readonly id: bigint) {}
        }
        Object.defineProperty(Row.prototype, 'extra', { value: 1n, enumerable: true });
        // biome-ignore lint/suspicious/noSparseArray: a hole, as JSON.stringify writes it
        const value = { list: [1n, , new Row(5n)], nested: { toJSON: () => ({ big: 2n ** 60n }) } };
        expect(stringifyJson(value)).toBe('{"list":[1,null,{"id":5}],"nested":{"big":1152921504606846976}}');
      });

      it('writes a bigint deeper than the copy goes', () => {
        let value: unknown = { id: 2n ** 63n };
        for (let i = 0; i < 40; i++) value = { child: value };
        expect(stringifyJson(value)).toBe(`${'{"child":'.repeat(40)}{"id":9223372036854775808}${'}'.repeat(40)}`);
      });

      it('still throws TypeError on a circular structure holding a bigint', () => {
        const circular: Record<string, unknown> = { list: [{ id: 1n }] };
        (circular.list as unknown[]).push(circular);
        expect(() => stringifyJson({ wrapper: circular })).toThrow(TypeError);
      });
    });

    it('still throws on a circular structure', () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      expect(() => stringifyJson(circular)).toThrow(TypeError);
    });
  });

  describe('dates (rule 2.7)', () => {
    it('writes RFC 3339 in UTC with the Z suffix', () => {
      expect(stringifyJson({ createdAt: new Date(Date.UTC(2026, 10, 23, 7, 3, 26, 5)) })).toBe(
        '{"createdAt":"2026-11-23T07:03:26.005Z"}',
      );
    });
  });
});

describe('idPair', () => {
  it('gives id as an exact integer and id_str with the same digits', () => {
    expect(stringifyJson({ ...idPair(12345678901234567891n), name: 'x' })).toBe(
      '{"id":12345678901234567891,"id_str":"12345678901234567891","name":"x"}',
    );
  });

  it('accepts the digits as a string, and a safe number', () => {
    expect(stringifyJson(idPair('9223372036854775807'))).toBe('{"id":9223372036854775807,"id_str":"9223372036854775807"}');
    expect(stringifyJson(idPair(42))).toBe('{"id":42,"id_str":"42"}');
  });

  it('is written exactly even when a toJSON method calls stringifyJson() again', () => {
    const value = { ...idPair(2n ** 63n), inner: { toJSON: () => stringifyJson({ a: 1 }) } };
    expect(stringifyJson(value)).toBe('{"id":9223372036854775808,"id_str":"9223372036854775808","inner":"{\\"a\\":1}"}');
  });

  it('writes every id exactly, whether a body holds a few of them or many', () => {
    const ids = (count: number) => Array.from({ length: count }, (_, i) => 2n ** 63n + BigInt(i));
    for (const count of [2, 9, 40]) {
      const digits = ids(count).map(String);
      expect(stringifyJson({ ids: ids(count).map((id) => new JsonInteger(id)), last: '>' })).toBe(
        `{"ids":[${digits.join(',')}],"last":"\\u003E"}`,
      );
    }
  });

  it('writes the digits it was given on both sides of 2^53, and keeps -0 as -0', () => {
    expect(stringifyJson({ a: idPair(2 ** 53 - 1).id, b: new JsonInteger(2n ** 53n), c: new JsonInteger('-0') })).toBe(
      '{"a":9007199254740991,"b":9007199254740992,"c":-0}',
    );
  });

  it('refuses a number that has already lost precision', () => {
    expect(() => idPair(2 ** 60)).toThrow('is not a safe integer');
  });

  it('refuses a string that is not an integer', () => {
    expect(() => idPair('12a')).toThrow(TypeError);
    expect(() => new JsonInteger('01')).toThrow(TypeError);
  });
});

describe('jsonResponses()', () => {
  const app = appWith(jsonResponses(), (a) => {
    a.get('/object', (_req, res) => {
      res.json({ id: 2n ** 64n + 1n, name: '<Ada>' });
    });
    a.get('/send', (_req, res) => {
      res.send({ via: 'send' });
    });
    a.get('/array', (_req, res) => {
      res.json([1, 2]);
    });
    a.get('/scalar', (_req, res) => {
      res.json('text');
    });
    a.get('/null', (_req, res) => {
      res.json(null);
    });
    a.use(errorHandler({ production: false, log: false }));
  });

  it('sends application/json; charset=utf-8 with the raw escaped and exact text', async () => {
    const res = await request(app).get('/object');
    expect(res.status).toBe(200);
    expectHeaders(res, { 'Content-Type': 'application/json; charset=utf-8' });
    expect(res.text).toBe('{"id":18446744073709551617,"name":"\\u003CAda\\u003E"}');
  });

  it('also handles res.send() of an object', async () => {
    const res = await request(app).get('/send');
    expect(res.text).toBe('{"via":"send"}');
    expectHeaders(res, { 'Content-Type': 'application/json; charset=utf-8' });
  });

  describe('when a handler sends something other than an object', () => {
    it.each([
      ['/array', 'an array'],
      ['/scalar', 'a string'],
      ['/null', 'null'],
    ])('%s answers 500 with code 50001 saying what was sent', async (path, what) => {
      const res = await request(app).get(path);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        errors: [
          {
            message: 'The response body must be a JSON object.',
            code: 50001,
            detail: {
              received: what,
              rule: 'docs/conventions.md §2.1: a JSON body is an object at the top level',
              ...(what === 'an array'
                ? {
                    fix: "wrap the list: sendList(res, 'items', { items, hasNext }) or res.json({ items, hasNext })",
                    exception:
                      "for an old client that reads an array: conventionExceptions({ topLevelArray: 'why' }) on the route",
                  }
                : { fix: 'wrap the value: res.json({ value })' }),
            },
          },
        ],
      });
    });

    it('gives only the generic message in production, and logs the programming error', async () => {
      const log = jest.fn();
      const prod = appWith(jsonResponses(), (a) => {
        a.get('/array', (_req, res) => {
          res.json([1]);
        });
        a.use(errorHandler({ production: true, log }));
      });
      const res = await request(prod).get('/array');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ errors: [{ message: 'An internal error occurred.', code: 50001 }] });
      expect(log).toHaveBeenCalledTimes(1);
      expect(log.mock.calls[0][0]).toMatchObject({ status: 500, code: 50001, method: 'GET', path: '/array' });
    });
  });
});
