export { type CommonHeadersOptions, commonHeaders } from './common-headers.js';
export { type MaintenanceOptions, maintenance } from './maintenance.js';
