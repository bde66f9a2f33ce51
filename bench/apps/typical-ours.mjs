// bench/apps/ours.mjs in the "typical app" set: behind morgan and cookie-parser (bench/lib/typical.mjs).
import { typical } from '../lib/typical.mjs';
import { createHandler as createApp } from './ours.mjs';

export async function createHandler() {
  return typical(await createApp());
}
