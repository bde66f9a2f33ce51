export { type CommonHeadersOptions, commonHeaders } from './common-headers.js';
