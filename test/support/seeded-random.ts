/**
 * A seeded generator for property tests (mulberry32: 32 bits of state,
 * enough for test data): the same seed gives the same values, so a failure
 * replays from the seed it prints.
 */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(values: readonly T[]): T => values[int(0, values.length - 1)] as T;
  const chance = (p: number): boolean => next() < p;
  /** `min` to `max` characters of `alphabet`. */
  const word = (alphabet: string, min: number, max: number): string =>
    Array.from({ length: int(min, max) }, () => pick([...alphabet])).join('');
  return { int, pick, chance, word };
}

export type SeededRandom = ReturnType<typeof seededRandom>;
