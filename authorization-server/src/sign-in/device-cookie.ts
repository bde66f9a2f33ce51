import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { checkInteger, invalidOption, readOptions } from 'express-api-conventions/extend';

/**
 * Device cookies for the browser door (OWASP "Slow Down Online Guessing
 * Attacks with Device Cookies"): a successful sign-in leaves a signed
 * `__Host-` cookie naming a random device id; the next sign-in from that
 * browser passes the id to the sign-in guard, which knows it for the account
 * it signed in, gives it its own allowance, and never delays it for failures
 * elsewhere. A cookie whose signature does not hold is no device: a forged
 * one buys nothing.
 */

export interface DeviceCookiesOptions {
  /** Signs the cookies; at least 32 characters, the same on every instance. Required. */
  secret: string;
  /** The cookie's lifetime in days (1 to 400). Default: 180. */
  maxAgeDays?: number;
}

/** A device as the browser door sees it. */
export interface BrowserDevice {
  /** What to give the guard: `{ device }` as SignInAttemptOptions. */
  readonly device: string;
  /** The signed cookie value naming it. */
  readonly cookie: string;
}

export interface DeviceCookies {
  /** The cookie's name: `__Host-device`. */
  readonly name: string;
  /** The request's device: its cookie's when the signature holds, else a new one (named by a cookie only after a success). */
  deviceOf(req: Request): BrowserDevice;
  /** After a successful sign-in: sets (or renews) the device's cookie, HttpOnly, Secure, SameSite=Strict, Path=/. */
  remember(res: Response, device: BrowserDevice): void;
}

export const DEVICE_COOKIE = '__Host-device';
const FACTORY = 'deviceCookies';

/** Makes the device cookies; options are checked now. */
export function deviceCookies(options: Readonly<DeviceCookiesOptions>): DeviceCookies {
  const given = readOptions<DeviceCookiesOptions>(FACTORY, options, ['secret', 'maxAgeDays']);
  const secret = given.secret;
  if (typeof secret !== 'string' || secret.length < 32)
    invalidOption(FACTORY, 'secret', secret, 'a string of at least 32 characters');
  const maxAgeSeconds = checkInteger(FACTORY, 'maxAgeDays', given.maxAgeDays ?? 180, { min: 1, max: 400 }) * 86_400;
  const sign = (id: string) => createHmac('sha256', secret).update(`device-cookie\n${id}`).digest('base64url');
  const named = (id: string): BrowserDevice => ({ device: `cookie:${id}`, cookie: `${id}.${sign(id)}` });
  return {
    name: DEVICE_COOKIE,
    deviceOf(req) {
      const value = cookieValue(req.headers.cookie, DEVICE_COOKIE);
      const [id, signature, extra] = value?.split('.') ?? [];
      if (id && signature && extra === undefined) {
        const expected = Buffer.from(sign(id));
        const given = Buffer.from(signature);
        if (given.length === expected.length && timingSafeEqual(given, expected)) return named(id);
      }
      return named(randomBytes(16).toString('base64url'));
    },
    remember(res, device) {
      res.append(
        'Set-Cookie',
        `${DEVICE_COOKIE}=${device.cookie}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Strict`,
      );
    },
  };
}

/** One cookie's value from a Cookie header (the first of that name), or undefined. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of header?.split(';') ?? []) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
