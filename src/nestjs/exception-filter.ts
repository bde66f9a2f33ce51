import { STATUS_CODES } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ApiError, apiError, type ErrorItem, isApiError } from '../errors/api-error.js';
import { ERROR_CATALOGUE, entryForStatus } from '../errors/catalogue.js';
import { type ErrorHandlerOptions, errorHandler } from '../errors/error-handler.js';
import { unmatchedRouteError } from '../errors/not-found.js';
import { toApiError } from '../errors/to-api-error.js';

/**
 * The part of NestJS's `ArgumentsHost` the filter reads; @nestjs/common's
 * `ArgumentsHost` fits it, so this module needs nothing of Nest, at run
 * time or in its types.
 */
export interface NestArgumentsHost {
  getType(): string;
  switchToHttp(): { getRequest(): unknown; getResponse(): unknown };
}

/** What an `HttpException` of @nestjs/common answers to, read without loading the package. */
interface HttpExceptionLike {
  readonly message: string;
  getStatus(): number;
  getResponse(): unknown;
}

const isHttpException = (value: unknown): value is HttpExceptionLike =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { getStatus?: unknown }).getStatus === 'function' &&
  typeof (value as { getResponse?: unknown }).getResponse === 'function';

/**
 * Nest's own 404 for a path no route matched: @nestjs/core's
 * RoutesResolver.registerNotFoundHandler() throws `Cannot GET /path` from a
 * middleware (so Express set no `req.route`).
 */
const isNestRouteNotFound = (exception: HttpExceptionLike, req: Request): boolean =>
  exception.getStatus() === 404 && req.route === undefined && exception.message === `Cannot ${req.method} ${req.originalUrl}`;

/** The message a team gave the exception, or undefined for Nest's default (the status's reason phrase or the class's name). */
function ownMessage(exception: HttpExceptionLike, status: number): string | undefined {
  const message = exception.message.trim();
  // Nest's HttpException.initMessage() names an exception without a message after its class: "Not Found Exception".
  const defaults = [STATUS_CODES[status], exception.constructor.name.match(/[A-Z][a-z]+|[0-9]+/g)?.join(' ')];
  return message === '' || defaults.includes(message) ? undefined : message;
}

/** The messages of a `BadRequestException(['…', '…'])`, as class-validator's ValidationPipe throws it. */
function validationMessages(response: unknown): string[] | undefined {
  const message = (response as { message?: unknown } | null)?.message;
  return Array.isArray(message) ? message.map(String) : undefined;
}

/**
 * An exception a NestJS app threw, in the library's one error model
 * (docs/errors.md): Nest's 404 for a path no route matched becomes the
 * unknown-endpoint 404 (40401), or 405 with `Allow` when the path answers
 * other methods; a `NotFoundException` of a matched route the missing
 * resource (40402); a `BadRequestException` with a list of messages one item
 * per message (40005); any other `HttpException` keeps its status, with its
 * own message shown below 500; everything else (an ApiError, a body
 * parser's error, a thrown Error) as toApiError() maps it.
 */
export function nestExceptionToApiError(exception: unknown, req: Request): ApiError {
  if (isApiError(exception) || !isHttpException(exception)) return toApiError(exception);
  if (isNestRouteNotFound(exception, req)) return unmatchedRouteError(req);
  const status = exception.getStatus();
  const message = ownMessage(exception, status);
  const cause = exception;
  if (status === 404) return apiError('resourceNotFound', { ...(message === undefined ? {} : { message }), cause });
  const messages = validationMessages(exception.getResponse());
  if (status === 400 && messages !== undefined && messages.length > 0) {
    const { code } = ERROR_CATALOGUE.validationFailed;
    const items: ErrorItem[] = messages.map((text) => ({ message: text, code }));
    return apiError('validationFailed', { items, cause });
  }
  const entry = entryForStatus(Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500);
  // Below 500 the message is the client's to read (http-errors' `expose`); a 5xx keeps it for developers.
  if (entry.status < 500) return new ApiError(entry, { ...(message === undefined ? {} : { message }), cause });
  return new ApiError(entry, { detail: exception.message, cause });
}

const ignoreNext: NextFunction = () => undefined;

/**
 * A NestJS exception filter that answers every exception of an HTTP route on
 * `@nestjs/platform-express` in the conventions' error shape, through
 * errorHandler() (the same body, headers and 5xx log). With `conventions()`
 * before it, a NestJS app needs two lines (docs/guides/nestjs.md):
 *
 * ```ts
 * app.use(conventions(options));
 * app.useGlobalFilters(new ConventionsExceptionFilter());
 * ```
 */
export class ConventionsExceptionFilter {
  readonly #render: ReturnType<typeof errorHandler>;

  /** Takes errorHandler()'s options (`production`, `log`, `challenge`), read once here. */
  constructor(options?: Readonly<ErrorHandlerOptions>) {
    this.#render = errorHandler(options);
  }

  /** Called by Nest for an exception no narrower filter caught. */
  catch(exception: unknown, host: NestArgumentsHost): void {
    // The filter renders HTTP answers only; a WebSocket or microservice context keeps Nest's own handling.
    if (host.getType() !== 'http') throw exception;
    const http = host.switchToHttp();
    const req = http.getRequest() as Request;
    const res = http.getResponse() as Response;
    this.#render(nestExceptionToApiError(exception, req), req, res, ignoreNext);
  }
}
