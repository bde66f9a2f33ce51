export { ConventionsExceptionFilter, type NestArgumentsHost } from './exception-filter.js';
