import bcrypt from 'bcryptjs';

/**
 * Sign-in accounts: a username, a bcrypt hash of the password, and the user
 * record it signs in as. The password itself is never kept.
 */
export interface Account {
  readonly username: string;
  readonly passwordHash: string;
  /** The user's id, as the token's `sub`. */
  readonly subject: string;
}

// A hash of a password nobody has: an unknown username costs the same
// comparison as a wrong password, so timing does not tell who exists.
const DUMMY_HASH = bcrypt.hashSync('no such user', 10);

export class Accounts {
  private readonly byName = new Map<string, Account>();

  async add(username: string, password: string, subject: string): Promise<void> {
    this.byName.set(username, { username, subject, passwordHash: await bcrypt.hash(password, 10) });
  }

  /** The subject of `username` when `password` is right; `undefined` otherwise, whichever was wrong. */
  async verify(username: string, password: string): Promise<string | undefined> {
    const account = this.byName.get(username);
    const matches = await bcrypt.compare(password, account?.passwordHash ?? DUMMY_HASH);
    return account && matches ? account.subject : undefined;
  }
}
