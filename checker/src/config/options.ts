import { ConfigurationError } from './configuration-error.js';

/**
 * Option checking for checkConventions() and the command: the pieces of the
 * library's src/config/options.ts the checker uses, copied so that it imports
 * nothing of the library. test/config-agrees.test.ts asserts that both give
 * the same statement for the same wrong option.
 */

const show = (value: unknown): string => {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

/** Edit distance, small strings only: used to suggest the option meant by a typo. */
const distance = (a: string, b: string): number => {
  const previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0] as number;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j] as number;
      const cost = a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1;
      previous[j] = Math.min(above + 1, (previous[j - 1] as number) + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return previous[b.length] as number;
};

/**
 * The hint after an unknown name: the closest known one (` Did you mean
 * \`resource\`?`), else the list of known names under `listTitle`.
 */
export function didYouMean(name: string, known: readonly string[], listTitle: string): string {
  const near = known.filter((candidate) => distance(name, candidate) <= 2);
  return near.length > 0 ? ` Did you mean \`${near[0]}\`?` : ` ${listTitle}: ${known.join(', ')}.`;
}

/**
 * Checks that `options` is an object whose keys are all known, and returns it
 * without its `undefined` values (so that spreading it over the defaults
 * keeps a default where an option was "not given").
 */
export function readOptions<T extends object>(
  factory: string,
  options: unknown,
  known: readonly (keyof T & string)[],
): Partial<T> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConfigurationError(
      'EAC_OPTIONS_NOT_OBJECT',
      `${factory}(options): options must be an object; received ${show(options)}.`,
    );
  }
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (!(known as readonly string[]).includes(key)) {
      const hint = didYouMean(key, known, 'Known options');
      throw new ConfigurationError(
        'EAC_OPTION_UNKNOWN',
        `${factory}(options): received an unsupported option \`${key}\`.${hint}`,
      );
    }
    if (value !== undefined) result[key] = value;
  }
  return result as Partial<T>;
}

/** Throws a ConfigurationError naming the option, the bad value and what is expected. */
export function invalidOption(factory: string, name: string, value: unknown, expected: string): never {
  const problem = `must be ${expected}; received ${show(value)}.`;
  throw new ConfigurationError('EAC_OPTION_INVALID', `${factory}(options): \`${name}\` ${problem}`, { option: name, problem });
}

export function checkBoolean(factory: string, name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') invalidOption(factory, name, value, 'true or false');
  return value;
}

export function checkInteger(factory: string, name: string, value: unknown, range: { min?: number; max?: number } = {}): number {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = range;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const bounds = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    invalidOption(factory, name, value, `an integer ${bounds}`);
  }
  return value;
}

export function checkFunction<F extends (...args: never[]) => unknown>(factory: string, name: string, value: unknown): F {
  if (typeof value !== 'function') invalidOption(factory, name, value, 'a function');
  return value as F;
}

export function checkString(factory: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) invalidOption(factory, name, value, 'a non-empty string');
  return value;
}
