import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as library from '../../src/config/index.js';
import { CONFIGURATION_ERROR_CODES, ConfigurationError } from '../src/config/configuration-error.js';
import * as checker from '../src/config/options.js';

/**
 * The checker reads its options with its own copy of the library's option
 * helpers (src/config/), so that it imports nothing of the library. A user
 * sees one kind of configuration error from both: the same class name,
 * codes, statement and option fields. Only the page the message points to
 * differs, each package's own (this one ships README.md, not docs/).
 */

/** What a call threw, as a user reads it, without the page it points to. */
function thrown(call: () => unknown): Record<string, unknown> {
  try {
    call();
  } catch (error) {
    const { name, code, statement, option, problem } = error as InstanceType<typeof ConfigurationError>;
    return { name, code, statement, option, problem };
  }
  throw new Error('expected a ConfigurationError');
}

describe("the checker's option helpers and the library's", () => {
  const known = ['origin', 'resource', 'maxRequests'] as const;
  type Known = Record<(typeof known)[number], unknown>;

  it.each([
    ['an option that is no object', (h: typeof checker) => h.readOptions<Known>('checkConventions', 'x', [...known])],
    ['an array as options', (h: typeof checker) => h.readOptions<Known>('checkConventions', [], [...known])],
    ['a misspelt option', (h: typeof checker) => h.readOptions<Known>('checkConventions', { orign: 1 }, [...known])],
    ['an unknown option', (h: typeof checker) => h.readOptions<Known>('checkConventions', { zzzzzz: 1 }, [...known])],
    ['a wrong boolean', (h: typeof checker) => h.checkBoolean('checkConventions', 'allowWrites', 'yes')],
    ['a wrong integer', (h: typeof checker) => h.checkInteger('checkConventions', 'maxRequests', 0, { min: 1, max: 200 })],
    ['a wrong lower bound', (h: typeof checker) => h.checkInteger('checkConventions', 'n', -1, { min: 0 })],
    ['a wrong function', (h: typeof checker) => h.checkFunction('checkConventions', 'fetch', 1)],
    ['an empty string', (h: typeof checker) => h.checkString('checkConventions', 'origin', '')],
    ['a bigint', (h: typeof checker) => h.invalidOption('checkConventions', 'id', 1n, 'a string')],
  ])('refuse %s alike', (_, call) => {
    const ours = thrown(() => call(checker));
    expect(ours.name).toBe('ConfigurationError');
    expect(ours).toEqual(thrown(() => call(library as unknown as typeof checker)));
  });

  it('accept the same options alike', () => {
    const given = { origin: 'https://app.example.com', resource: undefined };
    expect(checker.readOptions<Record<string, unknown>>('f', given, ['origin', 'resource'])).toEqual(
      library.readOptions<Record<string, unknown>>('f', given, ['origin', 'resource']),
    );
  });

  it('suggest the same name for a typo', () => {
    expect(checker.didYouMean('resorce', ['resource', 'origin'], 'Known')).toBe(' Did you mean `resource`?');
  });

  it("use only the library's codes", () => {
    expect(library.CONFIGURATION_ERROR_CODES).toEqual(expect.arrayContaining([...CONFIGURATION_ERROR_CODES]));
  });

  it("point to the checker's own README, which has a section for each code", () => {
    const error = new ConfigurationError('EAC_OPTION_INVALID', 'x');
    expect(error.message).toBe(
      'x [EAC_OPTION_INVALID: see node_modules/express-api-conventions-checker/README.md#eac_option_invalid]',
    );
    const headings = readFileSync(join(__dirname, '..', 'README.md'), 'utf8').match(/^#+ eac_\w+$/gm) ?? [];
    expect(headings.map((heading) => heading.replace(/^#+ /, ''))).toEqual(
      CONFIGURATION_ERROR_CODES.map((code) => code.toLowerCase()),
    );
  });
});
