import { invalidOption } from '../config/options.js';
import type { CounterStore } from './counter-store.js';

/**
 * Checks at start-up that the `store` option of a factory is a CounterStore
 * (its four methods), so that a wrong one throws a ConfigurationError naming
 * the factory instead of failing on the first request.
 */
export function checkStore(factory: string, store: unknown): CounterStore {
  const candidate = store as Partial<CounterStore> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.increment !== 'function' ||
    typeof candidate.get !== 'function' ||
    typeof candidate.decrement !== 'function' ||
    typeof candidate.reset !== 'function'
  ) {
    invalidOption(factory, 'store', store, 'a CounterStore (increment, get, decrement and reset)');
  }
  return candidate as CounterStore;
}
