// End-to-end: an instance's workload pages in headless Chromium against a real server fed by
// `quanta-agent run` polling a MariaDB with userstat=ON: the overview's link to the Tables
// page, sorting it by its columns, a table's indexes and queries (and back from a query's
// Tables tab), the Index review with the unused index and its DROP, the Users page linked to
// an account's top queries; after a server restart, the review saying its window restarted.
//
// Launched by tests/integration/test_statistics_mariadb.py, which starts everything:
//   QUANTA_E2E_URL        base URL of the running server (required)
//   QUANTA_E2E_TOKEN      an API token it accepts (required)
//   QUANTA_E2E_EXPECT     JSON: {"instance", "table", "rows_read", "unused", "used", "user",
//                         "select_commands"} as the server's own counters say (required)
//   QUANTA_E2E_PHASE      "window" (default) or "restarted"
//   QUANTA_E2E_ARTIFACTS  where screenshots go (default: frontend/e2e-artifacts)
//   QUANTA_E2E_CHROMIUM   the browser binary (default: /usr/bin/chromium)
// Never downloads a browser: playwright-core drives Debian's Chromium. Every step saves a
// screenshot; any console error fails it.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const TIMEOUT_MS = 30_000;
const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;
const baseUrl = env.QUANTA_E2E_URL;
const token = env.QUANTA_E2E_TOKEN;
const expect = env.QUANTA_E2E_EXPECT ? JSON.parse(env.QUANTA_E2E_EXPECT) : undefined;
const phase = env.QUANTA_E2E_PHASE || 'window';
const artifacts = resolve(env.QUANTA_E2E_ARTIFACTS || join(here, '..', 'e2e-artifacts'));
const executablePath = env.QUANTA_E2E_CHROMIUM || '/usr/bin/chromium';

let browser;
let page;
const consoleErrors = [];
const count = new Intl.NumberFormat('en-US');

before(async () => {
  assert.ok(baseUrl && token, 'QUANTA_E2E_URL / QUANTA_E2E_TOKEN are not set.');
  assert.ok(expect?.instance && expect?.table, 'QUANTA_E2E_EXPECT is not set.');
  mkdirSync(artifacts, { recursive: true });
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  // Signed in with the API token, as the sign-in form's token option keeps it.
  await context.addInitScript((value) => {
    globalThis.localStorage.setItem('quanta.token', value);
  }, token);
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

async function step(t, name, body) {
  try {
    await body();
    const path = join(artifacts, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    t.diagnostic(`screenshot: ${path}`);
    assert.deepEqual(consoleErrors, [], 'the page logged errors');
  } catch (error) {
    await page.screenshot({ path: join(artifacts, `${name}-failure.png`), fullPage: true });
    throw error;
  }
}

/** Waits until the region shows the data of the URL's view state (not a stale answer). */
async function settled(region) {
  await page.getByTestId(region).waitFor();
  await page.waitForFunction(
    (id) =>
      globalThis.document.querySelector(`[data-testid="${id}"]`)?.dataset.settled ===
      globalThis.location.search.slice(1),
    region,
  );
}

/** The text of one column (by its header's sort id) in each data row, top to bottom. */
async function column(tableId, sortId) {
  const headers = await page
    .getByTestId(tableId)
    .locator('thead th')
    .evaluateAll((ths) => ths.map((th) => th.querySelector('button')?.dataset.testid));
  const index = headers.indexOf(`sort-${sortId}`);
  assert.ok(index >= 0, `no column ${sortId} in ${tableId}: ${headers}`);
  return page
    .getByTestId(`${tableId}-row`)
    .evaluateAll((trs, i) => trs.map((tr) => tr.children[i].textContent.trim()), index);
}

const numbers = (texts) =>
  texts.map((text) => (text === '–' ? -1 : Number(text.replace(/,/g, ''))));

if (phase === 'window') {
  test('the overview links to the Tables page, sortable by every column', async (t) => {
    await step(t, 'workload-tables', async () => {
      await page.goto(new URL(`/?instance=${encodeURIComponent(expect.instance)}`, baseUrl).href);
      await page.getByTestId('workload-link-tables').click();
      await settled('tables-region');
      const row = page.getByTestId('tables-table-row').filter({ hasText: expect.table });
      const read = await column('tables-table', 'rows_read');
      const tables = await column('tables-table', 'table');
      assert.equal(read[tables.indexOf(expect.table)], count.format(expect.rows_read));
      assert.match(await page.getByTestId('statistics-source').innerText(), /userstat/);
      assert.match(await row.innerText(), /select/i, 'its query classes are listed');
      // Every column sorts; the default is rows read, largest first.
      const byRead = numbers(read);
      assert.deepEqual(
        byRead,
        [...byRead].sort((a, b) => b - a),
      );
      await page.getByTestId('sort-rows_changed').click();
      await page.waitForURL((url) => url.searchParams.get('sort') === 'rows_changed');
      await settled('tables-region');
      const changed = numbers(await column('tables-table', 'rows_changed'));
      assert.deepEqual(
        changed,
        [...changed].sort((a, b) => b - a),
      );
      await page.getByTestId('sort-table').click();
      await page.getByTestId('sort-table').click();
      await page.waitForURL((url) => url.searchParams.get('order') === 'asc');
      await settled('tables-region');
      const names = await column('tables-table', 'table');
      assert.deepEqual(names, [...names].sort());
      assert.equal(
        await page.locator('th[aria-sort]').getAttribute('aria-sort'),
        'ascending',
        'the sorted header says so',
      );
    });
  });

  test("a table's row opens its indexes and queries; a query's Tables tab links back", async (t) => {
    await step(t, 'workload-table', async () => {
      await page.getByTestId('table-link').filter({ hasText: expect.table }).click();
      await settled('table-region');
      await page.getByTestId('table-indexes').waitFor();
      const unused = page.getByTestId('table-index').filter({ hasText: expect.unused });
      assert.match(await unused.innerText(), /Unused/);
      assert.match(
        await unused.innerText(),
        new RegExp(`ALTER TABLE ${expect.table} DROP INDEX ${expect.unused}`),
      );
      const used = page.getByTestId('table-index').filter({ hasText: expect.used });
      assert.doesNotMatch(await used.innerText(), /Unused/);
      assert.ok((await page.getByTestId('table-queries').locator('tbody tr').count()) > 0);
    });
    await step(t, 'workload-query-tables-tab', async () => {
      const tablePage = page.url();
      await page.getByTestId('table-queries').locator('tbody a').first().click();
      await page.getByTestId('tab-tables').click();
      await page.getByTestId('tables').waitFor();
      const link = page
        .getByTestId('table-workload-link')
        .and(page.locator(`[href*="${encodeURIComponent(expect.table)}"]`));
      await link.first().click();
      await settled('table-region');
      assert.equal(new URL(page.url()).pathname, new URL(tablePage).pathname);
    });
  });

  test('the Index review lists the unused index with its DROP and why', async (t) => {
    await step(t, 'workload-index-review', async () => {
      await page.getByTestId('workload-nav-index-review').click();
      await settled('review-region');
      const finding = page.getByTestId('review-table-row').filter({ hasText: expect.unused });
      const text = await finding.innerText();
      assert.match(text, /Unused/);
      assert.match(text, /unbroken statistics/);
      assert.match(text, new RegExp(`ALTER TABLE ${expect.table} DROP INDEX ${expect.unused};`));
      assert.equal(
        await page.getByTestId('review-table-row').filter({ hasText: expect.used }).count(),
        0,
        'a used index is not a finding',
      );
      assert.match(await page.getByTestId('review-window').innerText(), /tables checked/);
    });
  });

  test("the Users page sorts accounts and links to an account's top queries", async (t) => {
    await step(t, 'workload-users', async () => {
      await page.getByTestId('workload-nav-users').click();
      await settled('users-region');
      const users = await column('users-table', 'user');
      const selects = await column('users-table', 'select_commands');
      assert.equal(selects[users.indexOf(expect.user)], count.format(expect.select_commands));
      assert.match(await page.getByTestId('users-source').innerText(), /USER_STATISTICS/);
      await page.getByTestId('sort-select_commands').click();
      await page.waitForURL((url) => url.searchParams.get('sort') === 'select_commands');
      await settled('users-region');
      const sorted = numbers(await column('users-table', 'select_commands'));
      assert.deepEqual(
        sorted,
        [...sorted].sort((a, b) => b - a),
      );
    });
    await step(t, 'workload-user-queries', async () => {
      await page
        .getByTestId('user-link')
        .filter({ hasText: new RegExp(`^${expect.user}$`) })
        .click();
      await page.waitForURL(
        (url) => url.pathname === '/' && url.searchParams.get('user') === expect.user,
      );
      assert.equal(new URL(page.url()).searchParams.get('instance'), expect.instance);
      await page.getByTestId('top-queries-table').waitFor();
    });
  });
} else {
  test('after a server restart the review says its window restarted', async (t) => {
    await step(t, 'workload-index-review-restarted', async () => {
      await page.goto(new URL(`/instances/${expect.instance_id}/index-review`, baseUrl).href);
      await settled('review-region');
      // (Whether an index is unused again depends on how long ago that was: the harness
      // checks through the API, at once, that none is.)
      assert.match(
        await page.getByTestId('review-restarted').innerText(),
        /the server restarted, which reset its counters/,
      );
    });
  });
}
