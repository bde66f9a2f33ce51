export type { WithConventionsOptions } from './plan.js';
export { withConventions } from './with-conventions.js';
