import bcrypt from 'bcryptjs';
import { PASSWORD_HASH_VERSION, parsePasswordHash } from '../src/sign-in/password-hash-format.js';
import { RECENT_COSTS, UnknownUserCost, unknownUserHash } from '../src/sign-in/unknown-user-hash.js';

/**
 * The stand-in an unknown username is checked against: a well-formed hash
 * of no password, at the cost most recent stored hashes have.
 */

describe('unknownUserHash()', () => {
  it('is a version-1 hash of the asked cost, different each time, that no password matches', () => {
    const [a, b] = [unknownUserHash(4), unknownUserHash(4)];
    expect(parsePasswordHash(a)).toMatchObject({ version: PASSWORD_HASH_VERSION, cost: 4 });
    expect(a).not.toBe(b);
    const bcryptPart = (parsePasswordHash(a) as { bcrypt: string }).bcrypt;
    expect(bcrypt.compareSync('', bcryptPart)).toBe(false);
    expect(bcrypt.compareSync('guess', bcryptPart)).toBe(false);
  });
});

describe('UnknownUserCost', () => {
  it('starts at passwordCost', () => {
    expect(new UnknownUserCost(12).cost).toBe(12);
  });

  it('takes the cost of the first stored hash verified', () => {
    const costs = new UnknownUserCost(12);
    costs.follow(10);
    expect(costs.cost).toBe(10);
  });

  it('is not moved by one sign-in of another cost among many of the usual one', () => {
    const costs = new UnknownUserCost(12);
    for (let i = 0; i < 5; i++) costs.follow(10);
    costs.follow(12);
    expect(costs.cost).toBe(10);
  });

  it(`follows a table whose hashes changed cost, once most of the last ${RECENT_COSTS} have the new one`, () => {
    const costs = new UnknownUserCost(12);
    for (let i = 0; i < RECENT_COSTS; i++) costs.follow(10);
    for (let i = 0; i < RECENT_COSTS / 2; i++) costs.follow(12);
    // A tie: the latest of the tied costs.
    expect(costs.cost).toBe(12);
    costs.follow(10);
    expect(costs.cost).toBe(10);
    costs.follow(12);
    costs.follow(12);
    expect(costs.cost).toBe(12);
  });
});
