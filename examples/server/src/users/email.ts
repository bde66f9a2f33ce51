/**
 * The one rule for an e-mail address, as JSON Schema: the server validates
 * `email` with it (users/routes.ts) and `npm run openapi:build` writes it as
 * docs/openapi.yaml's `Email` (scripts/openapi-build.mjs), so an address is
 * accepted by the server exactly when the document accepts it.
 *
 * The pattern stays inside what every reader of `format: email` accepts: a
 * dot-atom local part, then a host name of two labels or more whose last is
 * letters only (RFC 3696 §2: never all-numeric). No label has hyphens in
 * both its third and fourth positions: those are reserved for IDNA
 * (RFC 5890 §2.3.1), and whether an `xn--` label is valid punycode is beyond
 * a pattern, while readers that decode it refuse the invalid ones. So a
 * domain written as A-labels (`xn--bcher-kva.example`) is refused too.
 */

const LOCAL = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*";
/** A host-name label without hyphens in both its third and fourth positions (no lookahead: every regex dialect reads it). */
const LABEL = '[A-Za-z0-9]([A-Za-z0-9]|[A-Za-z0-9-]-?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)?';

export const EMAIL_SCHEMA = {
  description: [
    "An email address as the server checks it: ajv-formats' `email` format in its default",
    '("full") mode, and this pattern. A dot-separated local part of letters, digits and',
    "``!#$%&'*+/=?^_`{|}~-``, then `@` and a host name of at least two labels whose last label",
    'is letters (2 to 63). No label has hyphens in both its third and fourth positions (reserved',
    'for IDNA, RFC 5890 §2.3.1), so `xn--` labels are refused, valid punycode or not. Also refused:',
    '`0@com` (one label), `user@b.0` (an all-numeric top-level domain, RFC 3696 §2) and quoted',
    'local parts, though RFC 5321 allows the last. ASCII only; at most 254 characters. Written',
    'from examples/server/src/users/email.ts, the rule the server checks.',
  ].join('\n'),
  type: 'string',
  format: 'email',
  maxLength: 254,
  pattern: `^${LOCAL}@(${LABEL}\\.)+[A-Za-z]{2,63}$`,
} as const;
