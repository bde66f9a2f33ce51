/**
 * paging()'s defaults, in a file that loads nothing: paging() applies them,
 * and express-api-conventions/openapi states the same `limit` without
 * loading the middlewares. The conventions leave "Default and maximum value
 * of `limit`" unshown; these are ours.
 */

/** `limit` when the client sends none, and the largest `limit` accepted. */
export const PAGING_DEFAULTS = { defaultLimit: 20, maxLimit: 100 } as const;

/** `limit` when the client sends none and no `defaultLimit` is given: the default, never above `maxLimit`. */
export const defaultLimitFor = (maxLimit: number): number => Math.min(PAGING_DEFAULTS.defaultLimit, maxLimit);
