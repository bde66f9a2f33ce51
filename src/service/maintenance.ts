import type { RequestHandler } from 'express';
import { checkBoolean, checkFunction, invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';

/** Options of maintenance(). */
export interface MaintenanceOptions {
  /**
   * Whether maintenance is on. A function is asked on every request, so the
   * stop can be switched without a restart. Default: `true`.
   */
  enabled?: boolean | (() => boolean);
  /**
   * The `Retry-After` value: whole seconds, or a Date sent as an HTTP-date
   * (the conventions' Errors rule 6). Default: `300` seconds.
   */
  retryAfter?: number | Date;
}

const checkRetryAfter = (value: unknown): string => {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toUTCString();
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return String(value);
  return invalidOption('maintenance', 'retryAfter', value, 'a whole number of seconds (0 or more) or a valid Date');
};

/**
 * While on, every request gets 503 JSON with `Retry-After` (the conventions' Errors
 * rule 6: "Maintenance stop: 503 with Retry-After").
 */
export function maintenance(options?: Readonly<MaintenanceOptions>): RequestHandler {
  const given = readOptions<MaintenanceOptions>('maintenance', options, ['enabled', 'retryAfter']);
  const retryAfter = checkRetryAfter(given.retryAfter ?? 300);
  const enabled = given.enabled ?? true;
  const isOn =
    typeof enabled === 'function'
      ? checkFunction<() => boolean>('maintenance', 'enabled', enabled)
      : checkBoolean('maintenance', 'enabled', enabled)
        ? () => true
        : () => false;
  const headers = { 'Retry-After': retryAfter };
  return function maintenanceMiddleware(_req, _res, next) {
    if (isOn()) next(apiError('maintenance', { headers }));
    else next();
  };
}
