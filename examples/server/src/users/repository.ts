import { randomBytes } from 'node:crypto';
import type { SharedState } from '../state.js';

export type Gender = 'male' | 'female';

/** A user as the service keeps it. */
export interface User {
  /** 64-bit identifier, above 2^53: only a bigint holds it exactly. */
  readonly id: bigint;
  readonly name: string;
  readonly email: string;
  readonly gender: Gender;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What a client may write: every field on create and replace, some on a partial change. */
export interface UserInput {
  readonly name: string;
  readonly email: string;
  readonly gender: Gender;
}

/** The outcome of a write that can collide with another user's email. */
export type WriteResult = { readonly user: User } | { readonly emailTaken: true };

const USERS = 'users';
const EMAILS = 'users:emails';

/** A user as the state keeps it: plain JSON, ids and times as strings. */
export interface StoredUser {
  id: string;
  name: string;
  email: string;
  gender: Gender;
  createdAt: string;
  updatedAt: string;
}

export const storedUser = (user: User): StoredUser => ({
  ...user,
  id: user.id.toString(),
  createdAt: user.createdAt.toISOString(),
  updatedAt: user.updatedAt.toISOString(),
});

export const userFrom = (stored: StoredUser): User => ({
  ...stored,
  id: BigInt(stored.id),
  createdAt: new Date(stored.createdAt),
  updatedAt: new Date(stored.updatedAt),
});

const encode = (user: User): string => JSON.stringify(storedUser(user));
const decode = (text: string): User => userFrom(JSON.parse(text) as StoredUser);

// Email addresses are unique regardless of case.
const emailKey = (email: string): string => email.trim().toLowerCase();

const byId = (a: User, b: User): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** New identifiers: 2^62 plus 61 random bits, so always above 2^53 and below 2^63. */
const newId = (): bigint => (1n << 62n) + (randomBytes(8).readBigUInt64BE() >> 3n);

/**
 * The users, in the shared state: one hash of records and one hash that
 * claims each email, so that two instances cannot both create the same
 * address (HSETNX in Redis).
 */
export class UserRepository {
  constructor(private readonly state: SharedState) {}

  async get(id: bigint): Promise<User | undefined> {
    const text = await this.state.hashGet(USERS, id.toString());
    return text === undefined ? undefined : decode(text);
  }

  /** Every user, in id order. The seeded data set is small; a real service would page in the store. */
  async all(): Promise<User[]> {
    return (await this.state.hashValues(USERS)).map(decode).sort(byId);
  }

  async create(input: UserInput, id: bigint = newId(), now = new Date()): Promise<WriteResult> {
    const user: User = { id, ...input, createdAt: now, updatedAt: now };
    if (!(await this.state.hashSetIfAbsent(EMAILS, emailKey(input.email), user.id.toString()))) return { emailTaken: true };
    await this.state.hashSet(USERS, user.id.toString(), encode(user));
    return { user };
  }

  /** Writes `changes` over `current`; the email moves only when its new address is free. */
  async update(current: User, changes: Partial<UserInput>): Promise<WriteResult> {
    // Each change gets a later updatedAt, even within one millisecond: it is the entity tag.
    const updatedAt = new Date(Math.max(Date.now(), current.updatedAt.getTime() + 1));
    const user: User = { ...current, ...changes, updatedAt };
    const oldEmail = emailKey(current.email);
    const newEmail = emailKey(user.email);
    if (newEmail !== oldEmail) {
      if (!(await this.state.hashSetIfAbsent(EMAILS, newEmail, user.id.toString()))) return { emailTaken: true };
      await this.state.hashDelete(EMAILS, oldEmail);
    }
    await this.state.hashSet(USERS, user.id.toString(), encode(user));
    return { user };
  }

  async delete(user: User): Promise<boolean> {
    const deleted = await this.state.hashDelete(USERS, user.id.toString());
    if (deleted) await this.state.hashDelete(EMAILS, emailKey(user.email));
    return deleted;
  }
}
