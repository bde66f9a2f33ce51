import { ConfigurationError, checkInteger, checkOneOf, readOptions } from '../src/config/index.js';

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
        'f(options): options must be an object; received 5. [EAC_OPTIONS_NOT_OBJECT: see node_modules/express-api-conventions/docs/configuration-errors.md#eac_options_not_object]',
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
});
