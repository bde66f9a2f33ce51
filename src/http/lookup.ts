import type { NextFunction, Request, Response } from 'express';

/** What a middleware decides once a lookup of the application's (a session, a record's validators) is done. */
export type AfterLookup<T> = (req: Request, res: Response, next: NextFunction, value: T) => void;

/**
 * Runs a lookup the application gives (synchronous or not) and hands its
 * value to `decide`, made once at construction: no closure per request on
 * the synchronous path. A throw or a rejection goes to `next`, and `decide`
 * runs outside any promise chain's catch, so an error thrown further down
 * the stack is never mistaken for a lookup failure.
 */
export function afterLookup<T>(
  lookup: (req: Request) => T | Promise<T>,
  decide: AfterLookup<T>,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  let found: T | Promise<T>;
  try {
    found = lookup(req);
  } catch (error) {
    next(error);
    return;
  }
  if (found instanceof Promise) found.then((value) => decide(req, res, next, value), next);
  else decide(req, res, next, found);
}
