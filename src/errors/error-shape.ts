import type { Response } from 'express';
import { localsOf } from '../http/response-state.js';
import type { ApiError } from './api-error.js';

/**
 * Turns an error into the shape of the protocol a response speaks, for
 * errors raised by shared middleware that does not know it (a 413 of the
 * body parser, a 429 of the rate limiter on the token endpoint must still
 * be RFC 6749's `{ error, error_description }`).
 */
export type ErrorShape = (error: ApiError) => ApiError;

// Kept in the response's locals (src/http/response-state.ts), never as a property of the response.
const SHAPE = Symbol('express-api-conventions.errorShape');
type ShapeHolder = { [SHAPE]?: ErrorShape };

/** Every error rendered for this response goes through `shape` first. */
export function setErrorShape(res: Response, shape: ErrorShape): void {
  (localsOf(res) as ShapeHolder)[SHAPE] = shape;
}

/** The error as this response renders it: shaped when a shape was set. */
export function shapeError(res: Response, error: ApiError): ApiError {
  const shape = (localsOf(res) as ShapeHolder)[SHAPE];
  return shape === undefined ? error : shape(error);
}
