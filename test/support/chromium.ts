import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from './services.js';

/**
 * Launches Debian's Chromium through playwright-core (no browser download
 * works here). Playwright gives each launch a fresh temporary profile.
 * Close it with `browser.close()`.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}
