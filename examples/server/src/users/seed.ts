import type { SharedState } from '../state.js';
import type { Gender, UserInput, UserRepository } from './repository.js';

// Enough people for paging to show `hasNext` at the default page size
// (the contract asks for at least 25).
const PEOPLE: readonly (readonly [string, Gender])[] = [
  ['Bruno Castellanos', 'male'],
  ['Chiara Lindqvist', 'female'],
  ['Dmitri Okafor', 'male'],
  ['Elif Yamamoto', 'female'],
  ['Farid Novak', 'male'],
  ['Greta Oyelaran', 'female'],
  ['Hugo Marchetti', 'male'],
  ['Ines Kowalczyk', 'female'],
  ['Jonas Abernathy', 'male'],
  ['Keiko Ferreira', 'female'],
  ['Lars Mbeki', 'male'],
  ['Mira Halvorsen', 'female'],
  ['Nikolai Duarte', 'male'],
  ['Olga Nakamura', 'female'],
  ['Pavel Achterberg', 'male'],
  ['Quinn Adeyemi', 'female'],
  ['Rafael Sorensen', 'male'],
  ['Sofia Petrovic', 'female'],
  ['Tomas Iwu', 'male'],
  ['Ursula Blackwood', 'female'],
  ['Viktor Amundsen', 'male'],
  ['Wanda Kimura', 'female'],
  ['Xavier Lucchesi', 'male'],
  ['Yara Osei', 'female'],
  ['Zoltan Whitfield', 'male'],
  ['Amara Vasquez', 'female'],
  ['Bastian Eriksen', 'male'],
  ['Celeste Moreau', 'female'],
  ['Dario Tanaka', 'male'],
];

/** Seeded ids are fixed, so every instance and every restart agree on them; all are above 2^53. */
export const FIRST_SEEDED_ID = 4611686018427387911n;
const ID_STEP = 1_000_003n;
const SEEDED_AT = Date.UTC(2026, 0, 5, 9, 30);

const emailOf = (name: string): string => `${name.toLowerCase().replace(' ', '.')}@example.com`;

/**
 * Seeds the users once per state: the demo user first, then the people
 * above. With Redis, the first instance seeds and the others find it done.
 */
export async function seedUsers(state: SharedState, users: UserRepository, demo: UserInput): Promise<bigint> {
  const demoId = FIRST_SEEDED_ID;
  if (!(await state.setIfAbsent('users:seeded', new Date().toISOString()))) return demoId;
  const everyone: UserInput[] = [demo, ...PEOPLE.map(([name, gender]) => ({ name, gender, email: emailOf(name) }))];
  for (const [index, input] of everyone.entries()) {
    const at = new Date(SEEDED_AT + index * 86_400_000);
    await users.create(input, FIRST_SEEDED_ID + BigInt(index) * ID_STEP, at);
  }
  return demoId;
}
