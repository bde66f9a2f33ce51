import { ConfigurationError } from './configuration-error.js';

/**
 * Shared option checking for every middleware factory: one place that turns a
 * user's options into a checked object, so each module refuses a wrong option
 * at start-up with the same kind of message (docs/design.md principle 3).
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
 * \`rateLimit\`?`), else the list of known names under `listTitle`.
 */
export function didYouMean(name: string, known: readonly string[], listTitle: string): string {
  const near = known.filter((candidate) => distance(name, candidate) <= 2);
  return near.length > 0 ? ` Did you mean \`${near[0]}\`?` : ` ${listTitle}: ${known.join(', ')}.`;
}

const looksLikeRequest = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  'method' in value &&
  'headers' in value &&
  typeof (value as { on?: unknown }).on === 'function';

/**
 * What a factory answers to a name it does not know but recognises: an old
 * name of one of its options (`accessTokenTtl`: "It is now
 * `accessTokenTtlSeconds` (seconds).") or a name people bring from the
 * field's libraries (express-rate-limit's `windowMs`, cors's `origin`,
 * helmet's `hsts`), each mapped to a sentence naming this library's
 * equivalent. Such a name is refused like any unknown one
 * (`EAC_OPTION_UNKNOWN`), with that sentence instead of a guess.
 */
export type OptionHints = Readonly<Record<string, string>>;

const unknownOption = (factory: string, key: string, hint: string): ConfigurationError =>
  new ConfigurationError('EAC_OPTION_UNKNOWN', `${factory}(options): received an unsupported option \`${key}\`.${hint}`);

/**
 * Refuses, at start-up, any key of `options` that `hints` names: for the
 * factories whose options are read by a shared reader that takes no hints
 * (the Redis stores' readRedisOptions()). readOptions() does the same itself.
 */
export function refuseHintedOptions(factory: string, options: unknown, hints: OptionHints): void {
  if (typeof options !== 'object' || options === null) return;
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(hints, key)) throw unknownOption(factory, key, ` ${hints[key]}`);
  }
}

/**
 * Checks that `options` is an object whose keys are all known, and returns it
 * without its `undefined` values (so that spreading it over the defaults
 * keeps a default where an option was "not given"). An unknown key that
 * `hints` names is refused with that hint (a renamed option, another
 * library's name); any other unknown key with the closest known name.
 *
 * It also catches `app.use(factory)` written for `app.use(factory())`: Express
 * then calls the factory with a request as its first argument.
 */
export function readOptions<T extends object>(
  factory: string,
  options: unknown,
  known: readonly (keyof T & string)[],
  hints: OptionHints = {},
): Partial<T> {
  if (looksLikeRequest(options)) {
    throw new ConfigurationError(
      'EAC_FACTORY_NOT_CALLED',
      `${factory} was used as a middleware; call it to get one: app.use(${factory}()), not app.use(${factory}).`,
    );
  }
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
      throw unknownOption(factory, key, Object.hasOwn(hints, key) ? ` ${hints[key]}` : didYouMean(key, known, 'Known options'));
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

/**
 * A `log` option, the one name of every logging hook: a function, `false` for no log, or not given for
 * `fallback` (a factory's default logger, or `undefined` for none).
 */
export function checkLog<F extends (...args: never[]) => unknown>(
  factory: string,
  value: unknown,
  fallback: F | undefined,
): F | undefined {
  if (value === undefined) return fallback;
  if (value === false) return undefined;
  if (typeof value !== 'function') invalidOption(factory, 'log', value, 'a function, or false for no log');
  return value as F;
}

export function checkString(factory: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) invalidOption(factory, name, value, 'a non-empty string');
  return value;
}

export function checkOneOf<V extends string>(factory: string, name: string, value: unknown, allowed: readonly V[]): V {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    invalidOption(factory, name, value, `one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  return value as V;
}

/** Whether the process runs in production: the conventions' Errors rule 5 lets detail be less precise there. */
export const isProductionEnvironment = (): boolean => process.env.NODE_ENV === 'production';
