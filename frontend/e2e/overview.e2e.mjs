// End-to-end: sign in with a token, read the top-queries table, reload, sign out, in
// headless Chromium.
//
// Launched by the backend's pytest suite, which starts a server and seeds it:
//   QUANTA_E2E_URL         base URL of the running server (required)
//   QUANTA_E2E_TOKEN       an API token it accepts (required)
//   QUANTA_E2E_EXPECT_TOP  a substring of the fingerprint expected in the first data row (required)
//   QUANTA_E2E_ARTIFACTS   where screenshots go (default: frontend/e2e-artifacts)
//   QUANTA_E2E_CHROMIUM    the browser binary (default: /usr/bin/chromium)
// Never downloads a browser: playwright-core drives Debian's Chromium.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const TIMEOUT_MS = 30_000;
const here = dirname(fileURLToPath(import.meta.url));

const baseUrl = process.env.QUANTA_E2E_URL;
const token = process.env.QUANTA_E2E_TOKEN;
const expectTop = process.env.QUANTA_E2E_EXPECT_TOP;
const artifacts = resolve(process.env.QUANTA_E2E_ARTIFACTS || join(here, '..', 'e2e-artifacts'));
const executablePath = process.env.QUANTA_E2E_CHROMIUM || '/usr/bin/chromium';

let browser;
let page;
const consoleErrors = [];

before(async () => {
  // Fail, never skip: this file only runs when a test harness has started a server.
  assert.ok(
    baseUrl,
    'QUANTA_E2E_URL is not set: start a Quanta server and point QUANTA_E2E_URL at it ' +
      '(the backend test suite does this).',
  );
  assert.ok(token, 'QUANTA_E2E_TOKEN is not set: pass a token the server accepts.');
  assert.ok(
    expectTop,
    'QUANTA_E2E_EXPECT_TOP is not set: pass a substring of the fingerprint expected first.',
  );
  mkdirSync(artifacts, { recursive: true });

  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`page error: ${error.message}`));
});

after(async () => {
  await browser?.close();
});

async function screenshot(name) {
  const path = join(artifacts, `${name}.png`);
  await page?.screenshot({ path, fullPage: true });
  return path;
}

test('sign in and see the top queries', { timeout: 4 * TIMEOUT_MS }, async (t) => {
  try {
    await page.goto(new URL('/', baseUrl).href, { waitUntil: 'domcontentloaded' });

    const form = page.getByRole('form', { name: 'Sign in' });
    await form.waitFor();
    await form.getByLabel('API token').fill(token);
    await form.getByRole('button', { name: 'Sign in' }).click();

    const table = page.getByTestId('top-queries-table');
    await Promise.race([
      table.waitFor(),
      page
        .getByTestId('sign-in-error')
        .waitFor()
        .then(async () => {
          throw new Error(`sign-in failed: ${await page.getByTestId('sign-in-error').innerText()}`);
        }),
      page
        .getByTestId('queries-error')
        .waitFor()
        .then(async () => {
          throw new Error(`queries failed: ${await page.getByTestId('queries-error').innerText()}`);
        }),
      page
        .getByTestId('queries-empty')
        .waitFor()
        .then(() => {
          throw new Error('the server answered no queries for the last 24 hours');
        }),
    ]);

    await table.getByTestId('totals-row').waitFor();
    const firstRow = table.getByTestId('query-row').first();
    const firstText = await firstRow.innerText();
    // The cell truncates long fingerprints; its title holds the full text.
    const fingerprint = await firstRow.locator('.fingerprint').getAttribute('title');
    assert.ok(
      fingerprint?.includes(expectTop),
      `first row should contain ${JSON.stringify(expectTop)}, got ${JSON.stringify(fingerprint ?? firstText)}`,
    );
    // The localStorage key is part of the contract with other tools and docs.
    assert.equal(
      await page.evaluate(() => globalThis.localStorage.getItem('quanta.token')),
      token,
      'the token should be kept in localStorage under quanta.token',
    );

    const path = await screenshot('overview');
    t.diagnostic(`screenshot: ${path}`);

    // A reload keeps the session; signing out forgets the token.
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.getByTestId('top-queries-table').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    assert.equal(
      await page.evaluate(() => globalThis.localStorage.getItem('quanta.token')),
      null,
      'sign-out should remove the token',
    );

    assert.deepEqual(consoleErrors, [], 'the page logged errors');
  } catch (error) {
    await screenshot('overview-failure').catch(() => {});
    throw error;
  }
});
