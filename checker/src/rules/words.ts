/**
 * Small English word helpers shared by the two linters: is a name plural,
 * its plural and singular forms, its words. Heuristics, tuned for resource
 * names; each linter lets a route or a key be excepted where they are wrong.
 */

const IRREGULAR_PLURALS: Readonly<Record<string, string>> = {
  person: 'people',
  child: 'children',
  man: 'men',
  woman: 'women',
  datum: 'data',
  medium: 'media',
  criterion: 'criteria',
  foot: 'feet',
  tooth: 'teeth',
  mouse: 'mice',
  goose: 'geese',
  index: 'indexes',
  matrix: 'matrices',
  phenomenon: 'phenomena',
};
const IRREGULAR_SINGULARS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(IRREGULAR_PLURALS).map(([singular, plural]) => [plural, singular]),
);
/** Nouns whose plural is the same word: always accepted as plural. */
const UNCOUNTABLE = new Set([
  'news',
  'series',
  'species',
  'sheep',
  'fish',
  'deer',
  'aircraft',
  'equipment',
  'information',
  'feedback',
  'software',
  'metadata',
  'data',
  'media',
  'settings',
]);

/**
 * Words that qualify a collection rather than name one (`/v1/legacy/...`,
 * `/v1/internal/...`): never made plural (`legacies`), since no plural of
 * them names a resource.
 */
const QUALIFIERS = new Set([
  'legacy',
  'internal',
  'external',
  'public',
  'private',
  'beta',
  'alpha',
  'experimental',
  'deprecated',
  'old',
  'new',
  'latest',
  'current',
  'preview',
  'stable',
  'global',
  'local',
  'shared',
  'my',
]);

/** Whether a word qualifies a collection (an adjective such as `legacy`) rather than naming one. */
export function isQualifier(word: string): boolean {
  return QUALIFIERS.has(word.toLowerCase());
}

/** The words of a name: `user-profiles`, `user_profiles` and `userProfiles` all give `user`, `profiles`. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[-_.\s]+/)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase());
}

export function isPlural(word: string): boolean {
  const w = word.toLowerCase();
  if (UNCOUNTABLE.has(w) || w in IRREGULAR_SINGULARS) return true;
  if (w in IRREGULAR_PLURALS) return false;
  if (w.endsWith('ss') || w.endsWith('us') || w.endsWith('is')) return false;
  return w.endsWith('s');
}

export function pluralOf(word: string): string {
  const w = word.toLowerCase();
  if (isPlural(w)) return w;
  const irregular = IRREGULAR_PLURALS[w];
  if (irregular) return irregular;
  if (/[^aeiou]y$/.test(w)) return `${w.slice(0, -1)}ies`;
  if (/is$/.test(w)) return `${w.slice(0, -2)}es`;
  if (/(s|x|z|ch|sh)$/.test(w)) return `${w}es`;
  return `${w}s`;
}

export function singularOf(word: string): string {
  const w = word.toLowerCase();
  const irregular = IRREGULAR_SINGULARS[w];
  if (irregular) return irregular;
  if (UNCOUNTABLE.has(w) || !isPlural(w)) return w;
  if (w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (/(ss|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  return w.slice(0, -1);
}
