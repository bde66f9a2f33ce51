// bench/apps/express.mjs in the "typical app" set: behind morgan and cookie-parser (bench/lib/typical.mjs).
import { typical } from '../lib/typical.mjs';
import { createHandler as createApp } from './express.mjs';

export async function createHandler() {
  return typical(await createApp());
}
