import { type Request, type RequestHandler, Router } from 'express';
import { apiError, idPair } from 'express-api-conventions';
import type { User, UserInput, UserRepository, WriteResult } from './repository.js';

/** A user as clients see it: SPEC.md's `id` / `id_str` pair, `gender`, `*At` timestamps. */
export const representUser = (user: User) => ({
  ...idPair(user.id),
  name: user.name,
  email: user.email,
  gender: user.gender,
  createdAt: user.createdAt,
  updatedAt: user.updatedAt,
});

export interface UsersRouterOptions {
  readonly users: UserRepository;
  /** Run before every write: authentication (bearer or session) and its checks. */
  readonly writeGuards: readonly RequestHandler[];
}

const ID = /^[1-9][0-9]{0,19}$/;

async function findUser(users: UserRepository, req: Request): Promise<User> {
  const raw = req.params.id;
  const user = typeof raw === 'string' && ID.test(raw) ? await users.get(BigInt(raw)) : undefined;
  // SPEC.md Errors rule 4: a missing record (40402) differs from a wrong URI (40401).
  if (!user) throw apiError('resourceNotFound', { message: 'No user has this id.', detail: { id: raw } });
  return user;
}

const written = (result: WriteResult): User => {
  // SPEC.md status 409: "a create with a unique key that already exists".
  if ('emailTaken' in result) throw apiError('uniqueKeyTaken', { message: 'A user with this email already exists.' });
  return result.user;
};

/** The users resource: list, search, read, create, replace, change, delete. */
export function usersRouter(options: UsersRouterOptions): Router {
  const { users, writeGuards } = options;
  const router = Router();

  router.get('/v1/users', async (req, res) => {
    const { offset, limit } = paging(req);
    const page = await users.page(offset, limit);
    res.json({ users: page.users.map(representUser), hasNext: page.hasNext });
  });

  // SPEC.md path rule 6: search lives under a `search` segment, not the listing.
  router.get('/v1/users/search', async (req, res) => {
    const { offset, limit } = paging(req);
    const term = searchTerm(req);
    const page = await users.page(offset, limit, (user) => `${user.name} ${user.email}`.toLowerCase().includes(term));
    res.json({ users: page.users.map(representUser), hasNext: page.hasNext });
  });

  router.get('/v1/users/:id', async (req, res) => {
    res.json(representUser(await findUser(users, req)));
  });

  router.post('/v1/users', ...writeGuards, async (req, res) => {
    const user = written(await users.create(userInput(req.body, 'all')));
    res.status(201).location(`/v1/users/${user.id}`).json(representUser(user));
  });

  router.put('/v1/users/:id', ...writeGuards, async (req, res) => {
    const input = userInput(req.body, 'all');
    res.json(representUser(written(await users.update(await findUser(users, req), input))));
  });

  router.patch('/v1/users/:id', ...writeGuards, async (req, res) => {
    const changes = userInput(req.body, 'some');
    res.json(representUser(written(await users.update(await findUser(users, req), changes))));
  });

  router.delete('/v1/users/:id', ...writeGuards, async (req, res) => {
    await users.delete(await findUser(users, req));
    res.status(204).end();
  });

  return router;
}

// --- request reading -------------------------------------------------------

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const WHOLE = /^(0|[1-9][0-9]{0,8})$/;

function paging(req: Request): { offset: number; limit: number } {
  const query = req.query;
  const read = (name: 'offset' | 'limit', fallback: number, max: number): number => {
    const value = query[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || !WHOLE.test(value) || Number(value) > max || (name === 'limit' && value === '0')) {
      throw apiError('invalidQueryParameter', {
        message: `\`${name}\` must be a whole number ${name === 'limit' ? `from 1 to ${max}` : 'of 0 or more'}.`,
        items: [{ message: `\`${name}\` is not valid.`, code: 40003, field: name }],
      });
    }
    return Number(value);
  };
  return { offset: read('offset', 0, 1_000_000_000), limit: read('limit', DEFAULT_LIMIT, MAX_LIMIT) };
}

function searchTerm(req: Request): string {
  const q = req.query.q;
  if (typeof q !== 'string' || q.trim() === '') {
    throw apiError('invalidQueryParameter', { message: 'Search needs a term in `q`.' });
  }
  return q.trim().toLowerCase();
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const FIELDS = ['name', 'email', 'gender'] as const;

function userInput(body: unknown, required: 'all'): UserInput;
function userInput(body: unknown, required: 'some'): Partial<UserInput>;
function userInput(body: unknown, required: 'all' | 'some'): Partial<UserInput> {
  const given = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const problems: { message: string; code: number; field: string }[] = [];
  const problem = (field: string, message: string) => problems.push({ message, code: 40005, field });
  for (const key of Object.keys(given)) {
    if (!(FIELDS as readonly string[]).includes(key)) problem(key, `\`${key}\` is not a field of a user.`);
  }
  const input: Record<string, string> = {};
  for (const field of FIELDS) {
    const value = given[field];
    if (value === undefined) {
      if (required === 'all') problem(field, `\`${field}\` is required.`);
      continue;
    }
    if (typeof value !== 'string') problem(field, `\`${field}\` must be a string.`);
    else input[field] = value.trim();
  }
  if (input.name !== undefined && (input.name.length === 0 || input.name.length > 100))
    problem('name', '`name` must have 1 to 100 characters.');
  if (input.email !== undefined && (!EMAIL.test(input.email) || input.email.length > 254))
    problem('email', '`email` must be an email address.');
  if (input.gender !== undefined && input.gender !== 'male' && input.gender !== 'female')
    problem('gender', '`gender` must be `male` or `female`.');
  if (required === 'some' && Object.keys(given).length === 0) problem('body', 'Send at least one of `name`, `email`, `gender`.');
  if (problems.length > 0) throw apiError('validationFailed', { items: problems });
  return input as Partial<UserInput>;
}
