import type { SecurityEvent, SecurityPolicy } from '../../src/events/index.js';
import { typedSecrets } from './typed-secrets.js';

/**
 * What no security event may carry (docs/observability.md): a password, a
 * token, a cookie value, a proof or a secret. One event's findings, each a
 * line naming the field and why; none for a clean event.
 */

/** The fields of the event's shape; a field outside it is a finding. `satisfies` keeps the list whole. */
const EVENT_FIELDS = new Set(
  Object.keys({
    datetime: true,
    event: true,
    level: true,
    description: true,
    outcome: true,
    rule: true,
    status: true,
    method: true,
    route: true,
    sourceIp: true,
    requestId: true,
    traceId: true,
    spanId: true,
    userAgent: true,
    origin: true,
    subject: true,
    username: true,
    clientId: true,
    scope: true,
    claimedClientId: true,
    reason: true,
    device: true,
    sessionId: true,
    jti: true,
    policy: true,
    durationMs: true,
    poolWaitMs: true,
  } satisfies Record<keyof SecurityEvent, true>),
);
const POLICY_FIELDS = new Set(
  Object.keys({
    name: true,
    identity: true,
    limit: true,
    windowSeconds: true,
    delaySeconds: true,
    retryAfterSeconds: true,
    scope: true,
  } satisfies Record<keyof SecurityPolicy, true>),
);

/** The passwords and client secrets the suite signs in with, the demo's first. */
export const SUITE_SECRETS = [
  'wonderland-rabbit-hole',
  'caucus-race-winner',
  'correct horse',
  'read-only-pass',
  'tea-party-at-six',
  'demo-secret',
  'web-app-secret',
  'shared-secret',
  'a-test-secret-of-at-least-32-bytes-long',
  'api-client-secret-0123456789abcdef',
  'the-previous-secret-also-32-bytes',
  'neighbours-suite-secret',
  // The multi-byte passwords of test/support/passwords.ts.
  '€€€€€€',
  // The password every leak demo plants.
  'hunter2',
];

/**
 * The secrets to look for, from this list and from every one the suite's
 * sources type (typed-secrets.ts), split by how they can be found. A
 * distinctive one (a digit, a hyphen, a space, or 10 characters or more) is
 * found anywhere. A common word of 4 characters or more (`guess`, `wrong`) is
 * found as a whole word, except in a description, where it is a word of the
 * sentence ("The username or password is wrong."); shorter ones (`x`) cannot
 * be told from text at all.
 */
function secretsToFind(): { distinctive: string[]; words: RegExp[] } {
  const all = [...new Set([...SUITE_SECRETS, ...typedSecrets()])];
  const distinctive = all.filter((secret) => secret.length >= 10 || (secret.length >= 6 && /[^A-Za-z]/.test(secret)));
  const words = all
    .filter((secret) => !distinctive.includes(secret) && /^[A-Za-z]{4,}$/.test(secret))
    .map((word) => new RegExp(`\\b${word}\\b`));
  return { distinctive, words };
}

let toFind: ReturnType<typeof secretsToFind> | undefined;

/** A JWS or JWT (an access token, a DPoP proof): a base64url JSON header, `eyJ`, then a dot. */
const JWS = /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/;

/**
 * A random string of 32 base64url characters or more: a refresh token, a
 * session or device cookie, a CSRF token's MAC (32 random bytes are 43
 * characters). A run of one character class only (a route such as
 * `/v1/oauth2/device-authorization-requests`, a hyphenated word) is words,
 * not randomness; 32 random characters have at least two classes but for
 * odds of about 1 in 10^11.
 */
const LONG_RUN = /[A-Za-z0-9_-]{32,}/g;
// A UUID names a resource (an export's id in a path), not a secret: its hex and hyphens are left out of the runs.
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const looksRandom = (run: string): boolean => [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(run)).length >= 2;

function findingsOfValue(field: string, value: unknown): string[] {
  if (typeof value === 'number' || typeof value === 'boolean') return [];
  if (typeof value !== 'string') return [`${field}: not a string or a number (${typeof value})`];
  const found: string[] = [];
  toFind ??= secretsToFind();
  for (const secret of toFind.distinctive) {
    if (value.includes(secret)) found.push(`${field}: a password or secret the suite typed ("${secret}")`);
  }
  if (field !== 'description') {
    for (const word of toFind.words) {
      if (word.test(value)) found.push(`${field}: a password the suite typed ("${word.source.slice(2, -2)}")`);
    }
  }
  if (JWS.test(value)) found.push(`${field}: a token or proof (JWS-shaped)`);
  // A token is named by its jti only, which may be long; nothing else may hold a random run.
  if (field !== 'jti' && (value.replace(UUID, '').match(LONG_RUN) ?? []).some(looksRandom)) {
    found.push(`${field}: a random run of 32 base64url characters or more (a token, cookie or CSRF value)`);
  }
  return found;
}

/** The findings of one published event. */
export function secretsIn(event: unknown): string[] {
  if (event === null || typeof event !== 'object') return ['the event is not an object'];
  const found: string[] = [];
  for (const [field, value] of Object.entries(event)) {
    if (!EVENT_FIELDS.has(field)) found.push(`${field}: not a field of SecurityEvent`);
    else if (field === 'policy' && value !== null && typeof value === 'object') {
      for (const [name, limit] of Object.entries(value)) {
        if (!POLICY_FIELDS.has(name)) found.push(`policy.${name}: not a field of SecurityPolicy`);
        else found.push(...findingsOfValue(`policy.${name}`, limit));
      }
    } else found.push(...findingsOfValue(field, value));
  }
  return found;
}
