import type { ConsentPrompt } from 'express-api-conventions-authorization-server';
import { SIGN_IN_PAGE } from '../page-paths.js';

/**
 * The pages' HTML: every value printed escaped, no script and no style at
 * all, so the conventions' `Content-Security-Policy: script-src 'self'`
 * holds (docs/conventions.md rule 11). A team's own pages replace these.
 */

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe in an element or a quoted attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** What each scope lets a client do, in words for the consent page. */
const SCOPE_WORDS: Readonly<Record<string, string>> = {
  'users:write': 'create, change and delete users',
  exports: 'download every user at once',
};

const page = (title: string, body: string): string =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${escapeHtml(title)}</title></head>\n<body><main>\n<h1>${escapeHtml(title)}</h1>\n${body}\n</main></body></html>\n`;

const hidden = (name: string, value: string): string =>
  `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;

/** The sign-in form: `username`, `password`, and the authorization request to go back to. */
export function signInPage(returnTo: string | undefined, message?: string): string {
  return page(
    'Sign in',
    (message === undefined ? '' : `<p role="alert">${escapeHtml(message)}</p>\n`) +
      `<form method="post" action="${SIGN_IN_PAGE}">\n` +
      (returnTo === undefined ? '' : `${hidden('returnTo', returnTo)}\n`) +
      `<p><label>Username <input name="username" autocomplete="username" required maxlength="256"></label></p>\n` +
      `<p><label>Password <input type="password" name="password" autocomplete="current-password" required maxlength="1024"></label></p>\n` +
      `<p><button type="submit">Sign in</button></p>\n</form>`,
  );
}

/**
 * The consent form: the client's name and the scopes, the package's hidden
 * fields (the request and its CSRF token), the session's CSRF token for the
 * conventions' own check (`_csrf`), and the two buttons.
 */
export function consentPage(prompt: ConsentPrompt, sessionCsrfToken: string): string {
  const name = escapeHtml(prompt.client.name);
  const scopes = prompt.scopes.map((scope) => {
    const words = SCOPE_WORDS[scope];
    return `<li><code>${escapeHtml(scope)}</code>${words === undefined ? '' : `: ${escapeHtml(words)}`}</li>`;
  });
  const asked =
    scopes.length === 0
      ? `<p><strong>${name}</strong> asks to know who you are.</p>`
      : `<p><strong>${name}</strong> asks to act on your behalf:</p>\n<ul>${scopes.join('')}</ul>`;
  return page(
    `Allow ${prompt.client.name}?`,
    `${asked}\n<form method="post" action="${escapeHtml(prompt.action)}">\n` +
      `${hidden('request', prompt.fields.request)}\n${hidden('csrf_token', prompt.fields.csrf_token)}\n${hidden('_csrf', sessionCsrfToken)}\n` +
      `<p><button type="submit" name="decision" value="approve">Allow</button>\n` +
      `<button type="submit" name="decision" value="deny">Deny</button></p>\n</form>`,
  );
}

/** A page with one message: signed in with nowhere to go back to, or a request that cannot be shown. */
export const messagePage = (title: string, message: string): string => page(title, `<p>${escapeHtml(message)}</p>`);
