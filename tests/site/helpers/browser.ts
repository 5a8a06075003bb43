// Launches the Chromium the test command found or provided (FLOWPORT_TEST_CHROMIUM, see
// tests/helpers/test-environment.ts; Debian's /usr/bin/chromium when vitest runs on its own)
// through playwright-core: no downloaded browsers, no network beyond the loopback servers the
// tests start.
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_ARGS, testChromiumPath } from '../../helpers/test-environment.ts';

export const CHROMIUM_PATH = testChromiumPath();

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}
