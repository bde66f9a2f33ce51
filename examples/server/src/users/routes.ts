import { type Request, type RequestHandler, type Response, Router } from 'express';
import {
  apiError,
  cacheControl,
  checkPreconditions,
  entityTag,
  idPair,
  type JsonSchema,
  notModified,
  pageOf,
  paging,
  selectFields,
  sendItem,
  sendList,
  setValidators,
  type Validators,
  validate,
} from 'express-api-conventions';
import { requireScope } from 'express-api-conventions/oauth2';
import { EMAIL_SCHEMA } from './email.js';
import type { Precondition, User, UserInput, UserRepository, WriteResult } from './repository.js';

/** A user as clients see it: the `id` / `id_str` pair (docs/conventions.md rule 2.9), `gender`, `*At` timestamps. */
export const representUser = (user: User) => ({
  ...idPair(user.id),
  name: user.name,
  email: user.email,
  gender: user.gender,
  createdAt: user.createdAt,
  updatedAt: user.updatedAt,
});

/** What `fields` may select, and a named set for compact lists (docs/conventions.md rule 2.11). */
const USER_FIELDS = {
  fields: 'id,id_str,name,email,gender,createdAt,updatedAt',
  sets: { summary: 'id,name' },
} as const;

const PROPERTIES = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  email: EMAIL_SCHEMA,
  gender: { enum: ['male', 'female'] },
} as const;

/** POST and PUT: a whole user. */
const WHOLE_USER: JsonSchema = {
  type: 'object',
  properties: PROPERTIES,
  required: ['name', 'email', 'gender'],
  additionalProperties: false,
};
/** PATCH: some of it. */
const USER_CHANGES: JsonSchema = { type: 'object', properties: PROPERTIES, minProperties: 1, additionalProperties: false };
/** The search term: bounded, as docs/openapi.yaml says (`q`, `maxLength`). */
const SEARCH: JsonSchema = {
  type: 'object',
  properties: { q: { type: 'string', minLength: 1, maxLength: 256 } },
  required: ['q'],
};

/**
 * The validators of a user's representation: the entity tag is its version
 * (updatedAt, in milliseconds), so a write can be checked against what the
 * client read without building the body again.
 */
const validatorsOf = (user: User): Validators => ({ etag: entityTag(user.updatedAt), lastModified: user.updatedAt });

const ID = /^[1-9][0-9]{0,19}$/;

// docs/conventions.md rule 14.4: a missing record (40402) differs from a wrong URI (40401).
const userNotFound = (req: Request) =>
  apiError('resourceNotFound', { message: 'No user has this id.', detail: { id: req.params.id } });

/** The id of the path; one that cannot name a user is as missing as one that names nobody. */
function idOf(req: Request): bigint {
  const raw = req.params.id;
  if (typeof raw !== 'string' || !ID.test(raw)) throw userNotFound(req);
  return BigInt(raw);
}

async function findUser(users: UserRepository, req: Request): Promise<User> {
  const user = await users.get(idOf(req));
  if (!user) throw userNotFound(req);
  return user;
}

const written = (result: WriteResult, req: Request): User => {
  // 409 for a create whose unique key already exists (docs/errors.md, `uniqueKeyTaken`).
  if ('emailTaken' in result) throw apiError('uniqueKeyTaken', { message: 'A user with this email already exists.' });
  if ('missing' in result) throw userNotFound(req);
  return result.user;
};

const SEARCH_METHODS = 'GET, HEAD';

/** Any method but GET and HEAD on the search: 405 with its own `Allow` (OPTIONS: 200 with it, as Express answers elsewhere). */
const searchIsReadOnly: RequestHandler = (req, res) => {
  if (req.method === 'OPTIONS') {
    res.set('Allow', SEARCH_METHODS).type('text/plain').send(SEARCH_METHODS);
    return;
  }
  throw apiError('methodNotAllowed', {
    headers: { Allow: SEARCH_METHODS },
    detail: { method: req.method, path: req.originalUrl.split('?')[0] },
  });
};

/** The users resource: list, search, read, create, replace, change, delete. */
export function usersRouter(users: UserRepository): Router {
  const router = Router();
  const fields = selectFields(USER_FIELDS);
  const mayWrite = requireScope('users:write');

  router.get('/v1/users', paging(), fields, async (req, res) => {
    sendList(res, 'users', pageOf((await users.all()).map(representUser), req.page));
  });

  // docs/conventions.md rule 3.6: search lives under a `search` segment, not the listing.
  router.get('/v1/users/search', validate({ query: SEARCH }), paging(), fields, async (req, res) => {
    const term = String(req.query.q).trim().toLowerCase();
    const found = (await users.all()).filter((user) => `${user.name} ${user.email}`.toLowerCase().includes(term));
    sendList(res, 'users', pageOf(found.map(representUser), req.page));
  });
  // The search is not /v1/users/:id with the id "search": every other method ends here, before
  // the id's routes, and notFound() never unions the search with the id's methods.
  router.all('/v1/users/search', searchIsReadOnly);

  // Clients may keep a copy, but check it first: ETag and Last-Modified make that a 304.
  router.get('/v1/users/:id', fields, cacheControl('no-cache'), async (req, res) => {
    const user = await findUser(users, req);
    const { fields: selected } = req.query;
    // A selection is another representation: another tag.
    const etag =
      selected === undefined ? entityTag(user.updatedAt) : entityTag(`${user.updatedAt.getTime()} ${String(selected)}`);
    setValidators(res, { etag, lastModified: user.updatedAt });
    if (notModified(req, res)) return;
    sendItem(res, representUser(user));
  });

  // Each write answers with the validators a GET of the result returns (the
  // strong ETag of its version), so a client can send its own write's tag in If-Match.
  router.post('/v1/users', mayWrite, validate({ body: WHOLE_USER }), async (req, res) => {
    const user = written(await users.create(req.body as UserInput), req);
    setValidators(res, validatorsOf(user));
    res.status(201).location(`/v1/users/${user.id}`).json(representUser(user));
  });

  // Writes honour If-Match / If-Unmodified-Since: 412 when the user changed since the
  // client read it. The check is handed to the repository, which makes it against the
  // version its atomic write compares: checked before the write, two clients holding
  // the same tag could both pass it and one update would be lost.
  const preconditionOf =
    (req: Request): Precondition =>
    (current) =>
      checkPreconditions(req, validatorsOf(current));

  const replaceOrChange = async (req: Request, res: Response, changes: Partial<UserInput>) => {
    const user = written(await users.update(idOf(req), changes, preconditionOf(req)), req);
    setValidators(res, validatorsOf(user));
    res.json(representUser(user));
  };

  router.put('/v1/users/:id', mayWrite, validate({ body: WHOLE_USER }), async (req, res) => {
    await replaceOrChange(req, res, req.body as UserInput);
  });

  router.patch('/v1/users/:id', mayWrite, validate({ body: USER_CHANGES }), async (req, res) => {
    await replaceOrChange(req, res, req.body as Partial<UserInput>);
  });

  router.delete('/v1/users/:id', mayWrite, async (req, res) => {
    if (!(await users.delete(idOf(req), preconditionOf(req)))) throw userNotFound(req);
    res.status(204).end();
  });

  return router;
}
