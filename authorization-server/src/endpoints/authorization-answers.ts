import type { Request, Response } from 'express';
import { CACHE_CONTROL_SENSITIVE, writeJsonAnswer } from 'express-api-conventions/extend';
import { stringifyJson } from 'express-api-conventions/json';
import type { AuthorizationErrorPage, ErrorPageRenderer } from '../authorization-options.js';

/**
 * The authorization endpoint's answers: redirects (to the client, to the
 * sign-in page, to the consent page) and the errors that are the user's to
 * read. None may be stored by a cache: each holds a code or a decision
 * about one user (RFC 6749 §10.3).
 */

/** A page, with `extra` as query parameters after those it has (RFC 6749 §3.1.2: its own query is kept). */
export function withParams(page: string, extra: Readonly<Record<string, string | undefined>>): string {
  const fragment = page.indexOf('#');
  const base = fragment === -1 ? page : page.slice(0, fragment);
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) query.append(name, value);
  const text = query.toString();
  if (text === '') return base;
  const separator = !base.includes('?') ? '?' : /[?&]$/.test(base) ? '' : '&';
  return `${base}${separator}${text}`;
}

/** 302 (303 after a POST, RFC 9700 §4.12: never a 307 that would post the user's form to the client). */
export function redirect(req: Request, res: Response, location: string): void {
  res.statusCode = req.method === 'POST' ? 303 : 302;
  res.setHeader('Location', location);
  res.setHeader('Cache-Control', CACHE_CONTROL_SENSITIVE);
  // The location may hold a code: the next page's Referer must not (RFC 9700 §4.2.4).
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.end();
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);

/** The default page: no script, no style, nothing the request said. */
export const plainErrorPage: ErrorPageRenderer = (_req, res, page) => {
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', "default-src 'none'");
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization failed</title></head>` +
      `<body><h1>Authorization failed</h1><p>${escapeHtml(page.description)}</p><p>Error: ${escapeHtml(page.error)}</p></body></html>`,
  );
};

/**
 * An error not sent to the client (RFC 6749 §4.1.2.1: "MUST NOT
 * automatically redirect"): a page for a browser (Accept prefers
 * text/html), else RFC 6749's JSON `{ error, error_description }`.
 */
export function answerErrorPage(req: Request, res: Response, page: AuthorizationErrorPage, render: ErrorPageRenderer): void {
  res.statusCode = page.status;
  res.setHeader('Cache-Control', CACHE_CONTROL_SENSITIVE);
  if (req.accepts(['application/json', 'text/html']) === 'text/html') {
    render(req, res, page);
    return;
  }
  writeJsonAnswer(res, page.status, stringifyJson({ error: page.error, error_description: page.description }));
}
