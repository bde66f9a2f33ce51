import { ConfigurationError, checkInteger, checkLog, checkOneOf, readOptions, refuseHintedOptions } from '../src/config/index.js';
import { corsPolicy } from '../src/cors/index.js';
import { bearerAuth } from '../src/oauth2/index.js';
import { rateLimit } from '../src/rate-limit/index.js';
import { securityHeaders } from '../src/security/index.js';

describe('readOptions', () => {
  it('drops undefined values so defaults apply', () => {
    expect(readOptions<{ a?: number; b?: number }>('f', { a: 1, b: undefined }, ['a', 'b'])).toEqual({ a: 1 });
  });

  it('refuses a non-object with a stable code', () => {
    try {
      readOptions('f', 5, []);
      throw new Error('expected a throw');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).code).toBe('EAC_OPTIONS_NOT_OBJECT');
      expect((error as Error).message).toBe(
        'f(options): options must be an object; received 5. [EAC_OPTIONS_NOT_OBJECT: see https://github.com/express-api-conventions/express-api-conventions/blob/main/docs/configuration-errors.md#eac_options_not_object]',
      );
    }
  });

  it('lists the known options when no name is close', () => {
    expect(() => readOptions('f', { zzzzzz: 1 }, ['alpha', 'beta'])).toThrow('Known options: alpha, beta.');
  });
});

describe('checkers', () => {
  it('name the option, the value and the expectation', () => {
    expect(() => checkInteger('f', 'max', 1.5, { min: 1 })).toThrow(
      'f(options): `max` must be an integer at least 1; received 1.5.',
    );
    expect(() => checkInteger('f', 'max', 9, { min: 1, max: 5 })).toThrow('an integer from 1 to 5; received 9.');
    expect(() => checkOneOf('f', 'mode', 'x', ['a', 'b'] as const)).toThrow('`mode` must be one of "a", "b"; received "x".');
  });

  it('say which option and what is wrong with it in properties, and the message without its code in `statement`', () => {
    const thrown = (make: () => unknown): ConfigurationError => {
      try {
        make();
      } catch (error) {
        return error as ConfigurationError;
      }
      throw new Error('nothing was thrown');
    };
    const invalid = thrown(() => checkInteger('f', 'max', 9, { min: 1, max: 5 }));
    expect(invalid).toBeInstanceOf(ConfigurationError);
    expect(invalid.option).toBe('max');
    expect(invalid.problem).toBe('must be an integer from 1 to 5; received 9.');
    expect(invalid.statement).toBe('f(options): `max` must be an integer from 1 to 5; received 9.');
    expect(invalid.message).toBe(
      `${invalid.statement} [EAC_OPTION_INVALID: see https://github.com/express-api-conventions/express-api-conventions/blob/main/docs/configuration-errors.md#eac_option_invalid]`,
    );
    const unknown = thrown(() => readOptions('f', { mx: 1 }, ['max']));
    expect(unknown.code).toBe('EAC_OPTION_UNKNOWN');
    expect(Object.hasOwn(unknown, 'option')).toBe(false);
    expect(Object.hasOwn(unknown, 'problem')).toBe(false);
    expect(unknown.message.startsWith(unknown.statement)).toBe(true);
    expect(unknown.statement).not.toContain('EAC_OPTION_UNKNOWN');
  });
});

describe('hints: old names and names from the field’s libraries', () => {
  it('refuse a hinted name with its hint, under EAC_OPTION_UNKNOWN', () => {
    try {
      readOptions('f', { ttl: 5 }, ['ttlSeconds'], { ttl: 'It is now `ttlSeconds` (seconds).' });
      throw new Error('expected a throw');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).code).toBe('EAC_OPTION_UNKNOWN');
      expect((error as Error).message).toBe(
        'f(options): received an unsupported option `ttl`. It is now `ttlSeconds` (seconds). [EAC_OPTION_UNKNOWN: see https://github.com/express-api-conventions/express-api-conventions/blob/main/docs/configuration-errors.md#eac_option_unknown]',
      );
    }
  });

  it('leave a known name alone even when a hint names it', () => {
    expect(readOptions('f', { a: 1 }, ['a'], { a: 'never shown' })).toEqual({ a: 1 });
  });

  it('are checked before a shared reader by refuseHintedOptions()', () => {
    expect(() => refuseHintedOptions('S', { onError: () => undefined }, { onError: 'It is now `log`.' })).toThrow(
      'S(options): received an unsupported option `onError`. It is now `log`.',
    );
    expect(() => refuseHintedOptions('S', { log: false }, { onError: 'It is now `log`.' })).not.toThrow();
  });

  const key = [{ kid: 'k1', algorithm: 'HS256', secret: 'a-test-secret-of-at-least-32-bytes-long!' }] as const;
  const bearer = { keys: key, issuer: 'https://i.example', audience: 'https://a.example' };
  const CASES: readonly [string, () => unknown, string][] = [
    // Renamed: a unit in the name of every number that has one; one logging hook, `log`.
    [
      'bearerAuth clockTolerance',
      () => bearerAuth({ ...bearer, clockTolerance: 5 } as never),
      'It is now `clockToleranceSeconds` (seconds).',
    ],
    [
      'corsPolicy maxAge',
      () => corsPolicy({ origins: ['https://a.example'], maxAge: 600 } as never),
      'It is now `maxAgeSeconds` (seconds).',
    ],
    [
      'rateLimit onStoreError',
      () => rateLimit({ onStoreError: () => undefined } as never),
      'It is now `log` (a function, or `false` for no log).',
    ],
    // express-rate-limit
    ['rateLimit max', () => rateLimit({ max: 5 } as never), "express-rate-limit's `max` is `limit` here"],
    [
      'rateLimit windowMs',
      () => rateLimit({ windowMs: 60_000 } as never),
      "express-rate-limit's `windowMs` is `windowSeconds` here, in seconds",
    ],
    [
      'rateLimit keyGenerator',
      () => rateLimit({ keyGenerator: () => 'k' } as never),
      "express-rate-limit's `keyGenerator` is `identify` here",
    ],
    ['rateLimit message', () => rateLimit({ message: 'slow down' } as never), 'There is no `message`'],
    ['rateLimit handler', () => rateLimit({ handler: () => undefined } as never), 'There is no `handler`'],
    ['rateLimit standardHeaders', () => rateLimit({ standardHeaders: 'draft-8' } as never), 'are always sent'],
    ['rateLimit legacyHeaders', () => rateLimit({ legacyHeaders: false } as never), 'are never sent (docs/conventions.md §12.5)'],
    ['rateLimit passOnStoreError', () => rateLimit({ passOnStoreError: true } as never), "`storeFailure: 'open'`"],
    // cors
    ['corsPolicy origin', () => corsPolicy({ origin: 'https://a.example' } as never), "cors's `origin` is `origins` here"],
    [
      'corsPolicy optionsSuccessStatus',
      () => corsPolicy({ origins: ['https://a.example'], optionsSuccessStatus: 204 } as never),
      'always answered 200',
    ],
    [
      'corsPolicy preflightContinue',
      () => corsPolicy({ origins: ['https://a.example'], preflightContinue: true } as never),
      'There is no `preflightContinue`',
    ],
    // helmet
    [
      'securityHeaders hsts',
      () => securityHeaders({ hsts: false } as never),
      "helmet's `hsts` is `strictTransportSecurity` here",
    ],
    [
      'securityHeaders frameguard',
      () => securityHeaders({ frameguard: { action: 'deny' } } as never),
      "helmet's `frameguard` is `xFrameOptions` here",
    ],
    [
      'securityHeaders noSniff',
      () => securityHeaders({ noSniff: true } as never),
      "helmet's `noSniff` is `xContentTypeOptions` here",
    ],
    [
      'securityHeaders xXssProtection',
      () => securityHeaders({ xXssProtection: false } as never),
      '`X-XSS-Protection` is never sent',
    ],
    ['securityHeaders hidePoweredBy', () => securityHeaders({ hidePoweredBy: true } as never), 'always removes `X-Powered-By`'],
  ];

  it.each(CASES)('%s', (_name, make, hint) => {
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(hint);
  });
});

describe('checkLog(): the one logging hook', () => {
  const fallback = () => undefined;
  it('is the default when not given, nothing when false, the function when given', () => {
    const mine = () => undefined;
    expect(checkLog('f', undefined, fallback)).toBe(fallback);
    expect(checkLog('f', false, fallback)).toBeUndefined();
    expect(checkLog('f', mine, fallback)).toBe(mine);
  });

  it('refuses anything else', () => {
    expect(() => checkLog('f', 'yes', fallback)).toThrow(
      'f(options): `log` must be a function, or false for no log; received "yes".',
    );
  });
});
