import { randomBytes } from 'node:crypto';
import { apiError } from 'express-api-conventions';
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

/**
 * The outcome of a write: the user as written, or why nothing was written
 * (the email belongs to another user; the user does not exist, or no longer).
 */
export type WriteResult = { readonly user: User } | { readonly emailTaken: true } | { readonly missing: true };

/**
 * A check of the write against the user as stored when the write is applied
 * (the route's If-Match / If-Unmodified-Since); it throws to refuse the write.
 * The repository calls it with the very version its atomic write compares, so
 * a precondition that passes cannot be overtaken by another write.
 */
export type Precondition = (current: User) => void;

/**
 * How often a write is tried again when another write changed the user
 * between reading and writing it: each try reads the new version and checks
 * the precondition again (a client with If-Match then gets 412).
 */
export const WRITE_ATTEMPTS = 20;

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

const conflict = () => apiError('conflict', { message: 'The user kept changing while this write was applied; send it again.' });

/**
 * The users, in the shared state: one hash of records and one hash that
 * claims each email. Every write is one RecordWrite, compared with the
 * record as read and applied with its email claims in one atomic step
 * (a Lua script in Redis), so two instances never lose an update, never
 * bring a deleted user back, and never leave an address claimed by nobody.
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
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      // A fresh id on a retry: `changed` here means the id was taken (61 random bits: practically never).
      const user: User = { id: attempt === 0 ? id : newId(), ...input, createdAt: now, updatedAt: now };
      const outcome = await this.state.writeRecord({
        records: USERS,
        claims: EMAILS,
        id: user.id.toString(),
        expected: undefined,
        value: encode(user),
        release: [],
        take: [emailKey(user.email)],
      });
      if (outcome === 'written') return { user };
      if (outcome === 'claimTaken') return { emailTaken: true };
    }
    throw conflict();
  }

  /**
   * Writes `changes` over the stored user when `precondition` accepts it;
   * the email moves only when its new address is free. Read, check and write
   * again when another write came in between.
   */
  async update(id: bigint, changes: Partial<UserInput>, precondition: Precondition = () => {}): Promise<WriteResult> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const read = await this.state.hashGet(USERS, id.toString());
      if (read === undefined) return { missing: true };
      const current = decode(read);
      precondition(current);
      // Each change gets a later updatedAt, even within one millisecond: it is the entity tag.
      const updatedAt = new Date(Math.max(Date.now(), current.updatedAt.getTime() + 1));
      const user: User = { ...current, ...changes, updatedAt };
      const outcome = await this.state.writeRecord({
        records: USERS,
        claims: EMAILS,
        id: id.toString(),
        expected: read,
        value: encode(user),
        release: [emailKey(current.email)],
        take: [emailKey(user.email)],
      });
      if (outcome === 'written') return { user };
      if (outcome === 'claimTaken') return { emailTaken: true };
    }
    throw conflict();
  }

  /** Deletes the user and frees its email together, when `precondition` accepts it; false when there is none. */
  async delete(id: bigint, precondition: Precondition = () => {}): Promise<boolean> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const read = await this.state.hashGet(USERS, id.toString());
      if (read === undefined) return false;
      const current = decode(read);
      precondition(current);
      const outcome = await this.state.writeRecord({
        records: USERS,
        claims: EMAILS,
        id: id.toString(),
        expected: read,
        value: undefined,
        release: [emailKey(current.email)],
        take: [],
      });
      if (outcome === 'written') return true;
    }
    throw conflict();
  }
}
