// End-to-end: the UI in headless Chromium against a real server seeded by the real
// ingest path: sign in with a password, overview, annotation marker, sort, filter, search,
// deep links, query detail with its tabs, annotation impact, the first render of 1,000
// rows, settings (instances, chat channels, tokens, users: role change and disable), sign
// out, sign in with a token.
//
// Launched by tests/e2e/test_browser.py, which starts a server and seeds it:
//   QUANTA_E2E_URL            base URL of the running server (required)
//   QUANTA_E2E_TOKEN          an API token it accepts (required)
//   QUANTA_E2E_USER, QUANTA_E2E_PASSWORD  an admin user to sign in with (required)
//   QUANTA_E2E_DSN            a read-only DSN of the test MariaDB, for "add an instance" (required)
//   QUANTA_E2E_TARGET_DSN     the instance's execution target DSN, set again from the UI (required)
//   QUANTA_E2E_TARGET         that target's host:port, which profiles must name (required)
//   QUANTA_E2E_DML            a fingerprint substring of a statement that sends no rows (required)
//   QUANTA_E2E_RECEIVER       a local webhook URL the harness listens on (required)
//   QUANTA_E2E_EXPECT_TOP     a substring of the fingerprint expected in the first row (required)
//   QUANTA_E2E_ANNOTATION     the annotation the harness created, as JSON (required)
//   QUANTA_E2E_FILTER_SCHEMA  a schema to filter on; its queries all read table `items` (required)
//   QUANTA_E2E_SEARCH         a table name to search for (required)
//   QUANTA_E2E_MIN_CLASSES    how many query classes the server holds, at least 1000 (required)
//   QUANTA_E2E_ARTIFACTS      where screenshots go (default: frontend/e2e-artifacts)
//   QUANTA_E2E_CHROMIUM       the browser binary (default: /usr/bin/chromium)
// Never downloads a browser: playwright-core drives Debian's Chromium. Every test saves a
// screenshot; any console error fails the run (see `allowedConsoleError`).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const TIMEOUT_MS = 30_000;
const here = dirname(fileURLToPath(import.meta.url));

const env = process.env;
const baseUrl = env.QUANTA_E2E_URL;
const token = env.QUANTA_E2E_TOKEN;
const userName = env.QUANTA_E2E_USER;
const password = env.QUANTA_E2E_PASSWORD;
const dsn = env.QUANTA_E2E_DSN;
const targetDsn = env.QUANTA_E2E_TARGET_DSN;
const targetAddress = env.QUANTA_E2E_TARGET;
const dmlText = env.QUANTA_E2E_DML;
const receiver = env.QUANTA_E2E_RECEIVER;
const expectTop = env.QUANTA_E2E_EXPECT_TOP;
const annotation = env.QUANTA_E2E_ANNOTATION ? JSON.parse(env.QUANTA_E2E_ANNOTATION) : undefined;
const filterSchema = env.QUANTA_E2E_FILTER_SCHEMA;
const searchText = env.QUANTA_E2E_SEARCH;
const minClasses = Number(env.QUANTA_E2E_MIN_CLASSES);
const artifacts = resolve(env.QUANTA_E2E_ARTIFACTS || join(here, '..', 'e2e-artifacts'));
const executablePath = env.QUANTA_E2E_CHROMIUM || '/usr/bin/chromium';

let browser;
let context;
let page;
const consoleErrors = [];

// A tab whose data has not been collected answers 404 by design ("not collected yet");
// Chromium logs every 4xx response as a console error. Only those are allowed.
const COLLECTED =
  /\/api\/v1\/(queries\/[^/]+\/(explain|profile|suggestions)|instances\/\d+\/tables\/)/;
function allowedConsoleError(message) {
  return (
    message
      .text()
      .startsWith('Failed to load resource: the server responded with a status of 404') &&
    COLLECTED.test(message.location().url ?? '')
  );
}

function watch(target) {
  target.setDefaultTimeout(TIMEOUT_MS);
  target.on('console', (message) => {
    if (message.type() === 'error' && !allowedConsoleError(message)) {
      consoleErrors.push(`console (${target.url()}): ${message.text()}`);
    }
  });
  target.on('pageerror', (error) => consoleErrors.push(`page error: ${error.message}`));
  return target;
}

before(async () => {
  // Fail, never skip: this file only runs when a test harness has started a server.
  assert.ok(baseUrl, 'QUANTA_E2E_URL is not set: start a Quanta server and point it here.');
  assert.ok(token, 'QUANTA_E2E_TOKEN is not set: pass a token the server accepts.');
  assert.ok(expectTop, 'QUANTA_E2E_EXPECT_TOP is not set.');
  assert.ok(userName && password, 'QUANTA_E2E_USER / QUANTA_E2E_PASSWORD are not set.');
  assert.ok(dsn && receiver, 'QUANTA_E2E_DSN / QUANTA_E2E_RECEIVER are not set.');
  assert.ok(targetDsn && targetAddress, 'QUANTA_E2E_TARGET_DSN / QUANTA_E2E_TARGET are not set.');
  assert.ok(dmlText, 'QUANTA_E2E_DML is not set.');
  assert.ok(annotation?.id, 'QUANTA_E2E_ANNOTATION is not set: create an annotation first.');
  assert.ok(filterSchema && searchText, 'QUANTA_E2E_FILTER_SCHEMA / QUANTA_E2E_SEARCH not set.');
  assert.ok(minClasses >= 1000, 'QUANTA_E2E_MIN_CLASSES must be at least 1000.');
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
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = watch(await context.newPage());
});

after(async () => {
  await browser?.close();
});

async function screenshot(name, target = page, fullPage = true) {
  const path = join(artifacts, `${name}.png`);
  await target?.screenshot({ path, fullPage });
  return path;
}

/** Runs a step; on failure saves `<name>-failure.png` before rethrowing. */
async function step(t, name, body, { fullPage = true } = {}) {
  try {
    await body();
    t.diagnostic(`screenshot: ${await screenshot(name, page, fullPage)}`);
    assert.deepEqual(consoleErrors, [], 'the page logged errors');
  } catch (error) {
    await screenshot(`${name}-failure`).catch(() => {});
    throw error;
  }
}

const rows = () => page.getByTestId('query-row');

async function waitForTable(target = page) {
  const table = target.getByTestId('top-queries-table');
  await Promise.race([
    table.waitFor(),
    target
      .getByTestId('queries-error')
      .waitFor()
      .then(async () => {
        throw new Error(`queries failed: ${await target.getByTestId('queries-error').innerText()}`);
      }),
  ]);
  // The overview marks the view state whose data is on screen (old rows stay, dimmed,
  // while new ones load): wait until that is the URL's.
  await target.waitForFunction(
    () =>
      globalThis.document.querySelector('[data-testid="queries-region"]')?.dataset.settled ===
      globalThis.location.search.slice(1),
    undefined,
    { timeout: TIMEOUT_MS },
  );
  return table;
}

/** The fingerprints (full text, from the link title) of the rows on screen. */
async function fingerprints(target = page) {
  return target.getByTestId('query-link').evaluateAll((links) => links.map((a) => a.title));
}

/** The numbers in one column of the data rows (thousands separators removed). */
async function columnNumbers(index) {
  return rows().evaluateAll(
    (trs, i) => trs.map((tr) => Number(tr.children[i].textContent.replace(/,/g, ''))),
    index,
  );
}

async function waitForUrl(predicate, what) {
  await page
    .waitForURL((url) => predicate(url), { timeout: TIMEOUT_MS })
    .catch(() => {
      throw new Error(`the URL never showed ${what}: ${page.url()}`);
    });
}

test('sign in with a name and password and see the top queries', async (t) => {
  await step(t, 'overview', async () => {
    await page.goto(new URL('/', baseUrl).href, { waitUntil: 'domcontentloaded' });
    const form = page.getByRole('form', { name: 'Sign in with a password' });
    await form.waitFor();
    await screenshot('sign-in');
    // A wrong password gets the one message the API gives for any wrong name or password.
    await form.getByLabel('Name').fill(userName);
    await form.getByLabel('Password').fill(`${password}-wrong`);
    await form.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('sign-in-error').waitFor();
    // Chromium logs the 401 of that attempt itself: expected here, and only here.
    consoleErrors.splice(
      0,
      consoleErrors.length,
      ...consoleErrors.filter((line) => !line.includes('status of 401')),
    );
    await form.getByLabel('Password').fill(password);
    await form.getByRole('button', { name: 'Sign in', exact: true }).click();
    const table = await waitForTable();
    await table.getByTestId('totals-row').waitFor();
    const [first] = await fingerprints();
    assert.ok(first?.includes(expectTop), `first row should contain ${expectTop}, got ${first}`);
    assert.match(await page.getByTestId('user-name').innerText(), new RegExp(userName));
    // A cookie session: nothing in localStorage, the session cookie is HttpOnly.
    assert.equal(await page.evaluate(() => globalThis.localStorage.getItem('quanta.token')), null);
    const cookies = await context.cookies(baseUrl);
    assert.ok(cookies.find((c) => c.name === 'quanta_session')?.httpOnly, 'HttpOnly session');
    // The filter panel shows each value with its share of the load.
    const schema = page.getByTestId('filter-schema').filter({ hasText: filterSchema });
    assert.match(await schema.innerText(), /\d+(\.\d)?%|<0\.1%/);
    // The query text wraps instead of being cut at the column's width: the WHERE clause,
    // what tells queries apart, is on screen and nothing of it is clipped.
    const shown = await page
      .locator('[data-testid="query-link"] .fingerprint')
      .evaluateAll((codes) =>
        codes.slice(0, 10).map((code) => ({
          text: code.textContent ?? '',
          clipped:
            code.scrollHeight > code.clientHeight + 1 || code.scrollWidth > code.clientWidth + 1,
        })),
      );
    const withWhere = shown.filter((row) => / where /i.test(row.text));
    assert.ok(
      withWhere.length > 0,
      `some top queries have a WHERE clause: ${JSON.stringify(shown)}`,
    );
    assert.deepEqual(
      withWhere.filter((row) => row.clipped),
      [],
      'no query text with a WHERE clause is cut',
    );
  });
});

test('the annotation shows on the sparklines axis with its text on hover', async (t) => {
  await step(t, 'marker-hover', async () => {
    const marker = page.getByTestId('top-queries-table').getByTestId('annotation-marker').first();
    await marker.hover();
    const tip = marker.getByRole('tooltip');
    await tip.waitFor({ state: 'visible' });
    assert.match(
      await tip.innerText(),
      new RegExp(annotation.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
    );
    // Each sparkline draws the range as a band.
    assert.ok((await page.locator('.sparkline .spark-band').count()) > 0, 'no band in sparklines');
  });
});

test('sort by count, both ways, with the state in the URL', async (t) => {
  await step(t, 'sorted', async () => {
    await page.getByTestId('sort-count').click();
    await waitForUrl((url) => url.searchParams.get('sort') === 'count', 'sort=count');
    await waitForTable();
    const header = page.locator('th[aria-sort]');
    assert.equal(await header.getAttribute('aria-sort'), 'descending');
    const desc = await columnNumbers(4);
    assert.ok(desc.length > 1);
    assert.deepEqual(
      desc,
      [...desc].sort((a, b) => b - a),
      'counts should be descending',
    );

    // Keyboard: focus the header button and press Enter to flip the order.
    await page.getByTestId('sort-count').focus();
    await page.keyboard.press('Enter');
    await waitForUrl((url) => url.searchParams.get('order') === 'asc', 'order=asc');
    await waitForTable();
    const asc = await columnNumbers(4);
    assert.deepEqual(
      asc,
      [...asc].sort((a, b) => a - b),
      'counts should be ascending',
    );
    assert.equal(await page.locator('th[aria-sort]').getAttribute('aria-sort'), 'ascending');
  });
});

test('filter on a schema from the filter panel', async (t) => {
  await step(t, 'filter-cleared', async () => {
    await page.getByTestId('sort-load').click();
    const value = page.getByTestId('filter-schema').filter({ hasText: filterSchema });
    await value.click();
    await waitForUrl((url) => url.searchParams.get('schema') === filterSchema, 'the schema');
    await waitForTable();
    assert.equal(await value.getAttribute('aria-pressed'), 'true');
    const shown = await fingerprints();
    assert.ok(shown.length > 0, 'the filter left no rows');
    for (const fingerprint of shown) {
      // The client's own `USE inventory` is logged in that schema too.
      assert.match(
        fingerprint,
        /items|^use \?$/,
        `${fingerprint} is not a query of ${filterSchema}`,
      );
    }
    await screenshot('filtered');
    await value.click();
    await waitForUrl((url) => !url.searchParams.has('schema'), 'no schema');
  });
});

test('group by schema, then drill into one', async (t) => {
  await step(t, 'group-drilled', async () => {
    await page.getByTestId('group-by').selectOption('schema');
    await waitForUrl((url) => url.searchParams.get('group') === 'schema', 'group=schema');
    await waitForTable();
    const values = await page.getByTestId('group-link').allInnerTexts();
    assert.ok(values.includes(filterSchema), `no ${filterSchema} among ${values.join(', ')}`);
    await screenshot('grouped');
    await page.getByTestId('group-link').filter({ hasText: filterSchema }).click();
    await waitForUrl(
      (url) => url.searchParams.get('schema') === filterSchema && !url.searchParams.has('group'),
      'the schema filter without grouping',
    );
    await waitForTable();
    assert.ok((await rows().count()) > 0, 'drilling in showed no queries');
  });
});

test('search for a table', async (t) => {
  await step(t, 'searched', async () => {
    await page.goto(new URL('/', baseUrl).href);
    await waitForTable();
    await page.getByTestId('search').fill(searchText);
    await waitForUrl((url) => url.searchParams.get('q') === searchText, 'the search');
    await waitForTable();
    const shown = await fingerprints();
    assert.ok(shown.length > 0, 'the search found nothing');
    for (const fingerprint of shown) assert.ok(fingerprint.includes(searchText), fingerprint);
  });
});

test('a copied overview link opens the same view', async (t) => {
  await step(t, 'deep-link', async () => {
    await page
      .getByRole('group', { name: 'Time range' })
      .getByRole('button', { name: '7d' })
      .click();
    await waitForUrl((url) => url.searchParams.get('range') === '7d', 'range=7d');
    await page.getByTestId('sort-count').click();
    await waitForUrl((url) => url.searchParams.get('sort') === 'count', 'sort=count');
    await waitForTable();
    const link = page.url();
    const expected = await fingerprints();

    const other = watch(await context.newPage());
    try {
      await other.goto(link, { waitUntil: 'domcontentloaded' });
      await waitForTable(other);
      assert.equal(other.url(), link);
      assert.deepEqual(await fingerprints(other), expected);
      assert.equal(await other.getByTestId('search').inputValue(), searchText);
      assert.equal(
        await other.getByRole('button', { name: '7d' }).getAttribute('aria-pressed'),
        'true',
      );
      assert.equal(
        await other.locator('th[aria-sort="descending"] [data-testid="sort-count"]').count(),
        1,
        'the table should be sorted by count, descending',
      );
      await screenshot('deep-link-opened', other);
    } finally {
      await other.close();
    }
    // Back walks the history of view states.
    await page.goBack();
    await waitForUrl((url) => !url.searchParams.has('sort'), 'the previous sort');
  });
});

test('a custom time range goes into the URL', async (t) => {
  await step(t, 'custom-range', async () => {
    await page.goto(new URL('/', baseUrl).href);
    await waitForTable();
    await page.getByRole('button', { name: 'Custom' }).click();
    const form = page.getByRole('form', { name: 'Custom time range' });
    // datetime-local inputs in UTC: the last two hours, to the next whole minute.
    const local = (ms) => new Date(ms).toISOString().slice(0, 16);
    await form.getByLabel('From (UTC)').fill(local(Date.now() - 2 * 3_600_000));
    await form.getByLabel('To (UTC)').fill(local(Date.now() + 60_000));
    await form.getByRole('button', { name: 'Apply' }).click();
    await waitForUrl(
      (url) => /^\d{4}-/.test(url.searchParams.get('from') ?? '') && url.searchParams.has('to'),
      'from=<ISO>&to=<ISO>',
    );
    await waitForTable();
    const [first] = await fingerprints();
    assert.ok(first?.includes(expectTop), `first row should contain ${expectTop}, got ${first}`);
  });
});

test('numbers people read: load with a unit, rows examined per call for DML', async (t) => {
  await step(t, 'overview-numbers', async () => {
    await page.goto(new URL('/', baseUrl).href);
    await waitForTable();
    // Load: sessions with 2-3 significant digits, or query time per second: never a run of
    // zeros nor an exponent.
    const loads = await page.locator('[data-testid="query-row"] .load-value').allInnerTexts();
    assert.ok(loads.length > 10, 'loads are shown');
    for (const load of loads) {
      assert.match(load, /^(\d[\d,]*(\.\d{1,3})?|\d[\d.]* (ns|µs|ms|s)\/s|<1 ns\/s)$/, load);
      assert.doesNotMatch(load, /0\.000|e-/, load);
    }
    // A statement that sends no rows: rows examined per call, not ∞.
    await page.getByTestId('search').fill(dmlText);
    await waitForUrl((url) => url.searchParams.get('q') === dmlText, 'the search');
    await waitForTable();
    const dml = rows().filter({ hasText: dmlText }).first();
    const examined = await dml.evaluate((tr) => tr.children[8].textContent);
    assert.match(examined, /^\d[\d,.]*\/call$/, `rows examined per call: ${examined}`);
    assert.doesNotMatch(await page.getByTestId('top-queries-table').innerText(), /∞/);
  });
  await step(t, 'detail-metrics', async () => {
    await page.getByTestId('query-link').first().click();
    const metrics = page.getByTestId('metrics-table');
    await metrics.waitFor();
    assert.match(await metrics.locator('thead').innerText(), /Per second/);
    const queryTime = metrics.locator('tbody tr').filter({ hasText: 'Query time' });
    const perSecond = await queryTime.locator('td').first().innerText();
    // Time per second: "7.98 µs/s", never "7.98 µs" under a rate heading.
    assert.match(perSecond, /^([\d.]+ (ns|µs|ms|s)|<1 ns)\/s$/, perSecond);
    assert.match(await page.locator('.stat-value').first().innerText(), /\d/);
    await metrics.scrollIntoViewIfNeeded();
  });
});

test('an empty range while an agent is connected says so, not "run quanta-agent"', async (t) => {
  await step(t, 'overview-empty-agent-connected', async () => {
    // An hour years before the workload: nothing in it.
    const from = '2020-01-01T00:00:00.000Z';
    const to = '2020-01-01T01:00:00.000Z';
    await page.goto(new URL(`/?from=${from}&to=${to}`, baseUrl).href);
    const empty = page.getByTestId('queries-empty');
    await empty.waitFor();
    const connected = page.getByTestId('agent-connected');
    await connected.waitFor();
    assert.match(await connected.innerText(), /An agent is connected \(mariadb-e2e; /);
    assert.doesNotMatch(await empty.innerText(), /run quanta-agent|quanta-agent import/);
  });
});

test('open a query: metrics, charts with the annotation, tabs, deep link', async (t) => {
  await step(t, 'detail', async () => {
    // The annotations are held back until a row link has focus: their markers arriving
    // must not take the focus away (they once remounted every cell).
    let releaseAnnotations = () => {};
    const annotationsHeld = new Promise((resolve) => (releaseAnnotations = resolve));
    const annotationsRoute = (url) => url.pathname === '/api/v1/annotations';
    await page.route(annotationsRoute, async (route) => {
      await annotationsHeld;
      await route.continue();
    });
    await page.goto(new URL('/', baseUrl).href);
    await waitForTable();
    const link = page.getByTestId('query-link').first();
    // Keyboard: row links are focusable, the arrow keys walk them, Enter opens one.
    const focusedTitle = () => page.evaluate(() => globalThis.document.activeElement?.title);
    const titles = await fingerprints();
    await link.focus();
    releaseAnnotations();
    await page.getByTestId('top-queries-table').getByTestId('annotation-marker').first().waitFor();
    await page.unroute(annotationsRoute);
    assert.equal(await focusedTitle(), titles[0]);
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedTitle(), titles[1]);
    await page.keyboard.press('ArrowUp');
    assert.equal(await focusedTitle(), titles[0]);
    await page.keyboard.press('Enter');
    await page.getByTestId('detail-fingerprint').waitFor();
    assert.ok((await page.getByTestId('detail-fingerprint').innerText()).includes(expectTop));
    await page.getByTestId('metrics-table').waitFor();
    assert.match(await page.getByTestId('metrics-table').innerText(), /Calls/);
    await page.getByTestId('load-chart').locator('.recharts-line').first().waitFor();
    await page.getByTestId('examples').waitFor();

    const marker = page.getByTestId('load-chart').getByTestId('annotation-marker').first();
    await marker.hover();
    await marker.getByRole('tooltip').waitFor({ state: 'visible' });
    assert.ok((await marker.getByRole('tooltip').innerText()).includes(annotation.text));
    await screenshot('detail-marker-hover');

    await page.getByTestId('tab-explain').click();
    await waitForUrl((url) => url.searchParams.get('tab') === 'explain', 'tab=explain');
    // Nothing collected yet: request an EXPLAIN (the harness gave the instance a read-only
    // DSN). The tab shows the queued run and polls until the worker has run it on MariaDB.
    await page.getByTestId('explain-not-collected').waitFor();
    await screenshot('detail-explain-not-collected');
    await page.getByTestId('request-collection').click();
    await page.getByTestId('explain').waitFor();
    await page.locator('.run-ok').waitFor({ timeout: 90_000 });
    const explained = await page.getByTestId('explain').innerText();
    assert.match(explained, /full table scan/, 'the EXPLAIN should flag the scan of orders');
    assert.match(explained, /orders/);
    await screenshot('detail-explain');

    // Index advice: beat advises a query this heavy by itself once the instance has a DSN
    // (day one), else it is requested from its tab; the worker computes it either way.
    await page.getByTestId('tab-suggestions').click();
    const suggestions = page.getByTestId('suggestions');
    const notCollected = page.getByTestId('suggestions-not-collected');
    await suggestions.or(notCollected).first().waitFor();
    if (await notCollected.isVisible()) {
      await page.getByTestId('request-collection').click();
      await page.getByRole('status').filter({ hasText: 'Requested' }).waitFor();
    }
    await suggestions.waitFor({ timeout: 90_000 });
    assert.match(await page.getByTestId('suggestions').innerText(), /orders/);
    // The workload index plan of the instance is one click away from a query's advice.
    const planLink = suggestions.getByTestId('index-plan-link');
    assert.equal(await planLink.innerText(), 'mariadb-e2e');
    assert.match(await planLink.getAttribute('href'), /^\/instances\/\d+\/index-plan$/);
    await screenshot('detail-suggestions');

    // Tables: the EXPLAIN took a snapshot of the table it reads.
    await page.getByTestId('tab-tables').click();
    const tables = page.getByTestId('tables');
    await tables
      .getByText(/^Taken .* UTC/)
      .first()
      .waitFor();
    const tablesText = await tables.innerText();
    assert.match(tablesText, /shop\.orders/);
    // Labelled facts in human units, titled sections; no raw values or unlabelled lists.
    const facts = await tables.getByTestId('table-facts').first().innerText();
    assert.match(facts, /Rows \(estimate\)\s+\d{1,3}(,\d{3})*/);
    assert.match(facts, /Data size\s+\d+(\.\d)? (bytes|KB|MB|GB)/);
    assert.match(facts, /Primary key\s+id/);
    assert.match(await tables.getByTestId('table-columns').first().innerText(), /^Columns/);
    assert.match(
      await tables.getByTestId('table-indexes').first().innerText(),
      /^Secondary indexes/,
    );
    assert.doesNotMatch(tablesText, /No rows\.|\["|data_length|index_length/);
    await screenshot('detail-tables');

    await page.getByTestId('tab-explain').click();

    const detailLink = page.url();
    const other = watch(await context.newPage());
    try {
      await other.goto(detailLink, { waitUntil: 'domcontentloaded' });
      await other.getByTestId('detail-fingerprint').waitFor();
      assert.equal(
        await other.getByTestId('tab-explain').getAttribute('aria-selected'),
        'true',
        'the tab should come from the URL',
      );
    } finally {
      await other.close();
    }
    await page.getByTestId('tab-examples').click();
    await page.getByTestId('examples').waitFor();
  });
});

test('profile a point lookup from its Profile tab', async (t) => {
  await step(t, 'detail-profile', async () => {
    // A point lookup: each profile run executes it on the execution target, so a cheap one.
    await page.goto(new URL(`/?q=${encodeURIComponent(searchText)}`, baseUrl).href);
    await waitForTable();
    await page.locator('[data-testid="query-link"][title*="where id"]').first().click();
    await page.getByTestId('detail-fingerprint').waitFor();
    await page.getByTestId('tab-profile').click();
    await page.getByTestId('profile-not-collected').waitFor();
    await page.getByTestId('request-collection').click();
    // The harness enabled profiling on the instance: the worker runs the example SELECT.
    await page.getByTestId('profile').locator('.run-ok').waitFor({ timeout: 90_000 });
    assert.match(await page.getByTestId('profile').innerText(), /Response/);
    // The stages under 1% are one row: every other row's share is at least 1%.
    const shares = await page
      .getByTestId('profile')
      .locator('tbody tr:not(.folded):not(.lost-time) td:nth-child(3)')
      .allInnerTexts();
    assert.ok(shares.length > 0, 'the profile lists its stages');
    assert.deepEqual(
      shares.filter((share) => Number.parseFloat(share) < 1),
      [],
      'stages under 1% are folded',
    );
    assert.match(await page.getByTestId('profile').innerText(), /other stages, each under 1%/);
    // Where it ran: the execution target, named by address, not the monitored server.
    const header = await page.getByTestId('profile').getByTestId('run-header').innerText();
    assert.ok(
      header.includes(`on the execution target ${targetAddress} (`),
      `the profile should name its execution target ${targetAddress}: ${header}`,
    );
    assert.match(header, /for mariadb-e2e$/);
    assert.match(
      await page.getByTestId('profile-response').innerText(),
      /^Response .* over \d+ runs/,
    );
  });
});

test('the Profile tab without an execution target points to the instance in Settings', async (t) => {
  const detail = page.url();
  await step(t, 'detail-profile-no-target', async () => {
    // An admin removes the target (Settings -> the instance -> Edit).
    await openSettings();
    const row = page.getByTestId('instance-row').filter({ hasText: 'mariadb-e2e' });
    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit mariadb-e2e' });
    await form.getByLabel('Remove the execution target (no ANALYZE, no profiles)').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    assert.match(await row.getByTestId('instance-target').innerText(), /none \(EXPLAIN only\)/);

    await page.goto(detail);
    await page.getByTestId('profile').waitFor();
    const again = page.getByTestId('collect-again');
    assert.equal(await again.isDisabled(), true, '"Collect again" is disabled');
    const reason = page.getByTestId('profile').getByTestId('missing-prerequisite');
    assert.match(await reason.innerText(), /run only on an execution target/);
    assert.equal(
      await again.getAttribute('aria-describedby'),
      await reason.getAttribute('id'),
      'the button is described by the reason',
    );
    assert.doesNotMatch(await reason.innerText(), /PATCH|\/api\//);
    assert.doesNotMatch(
      await page.getByTestId('profile').innerText(),
      /Response –|not accounted for –/,
    );
  });
  await step(
    t,
    'detail-profile-target-again',
    async () => {
      // The link opens the instance's form in Settings, where the target is set again.
      await page.getByTestId('prerequisite-link').click();
      await waitForUrl(
        (url) => url.pathname === '/settings' && url.searchParams.get('edit') === 'mariadb-e2e',
        'the settings with the instance being edited',
      );
      const form = page.getByRole('form', { name: 'Edit mariadb-e2e' });
      await form.waitFor();
      await form.getByTestId('target-dsn').fill(targetDsn);
      await screenshot('settings-edit-from-profile');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.waitFor({ state: 'detached' });
      const row = page.getByTestId('instance-row').filter({ hasText: 'mariadb-e2e' });
      assert.match(await row.getByTestId('instance-target').innerText(), /quanta_exec:\*\*\*@/);
      // Back on the query, where the next steps expect to be: "Collect again" works again.
      await page.goto(detail);
      await page.getByTestId('profile').waitFor();
      assert.equal(await page.getByTestId('collect-again').isDisabled(), false);
    },
    { fullPage: false },
  );
});

test('from a chart marker to the impact of the annotation', async (t) => {
  await step(
    t,
    'impact',
    async () => {
      await page.getByTestId('load-chart').getByTestId('annotation-marker').first().click();
      await waitForUrl((url) => url.pathname === `/annotations/${annotation.id}`, 'the impact');
      const outcome = page
        .getByTestId('impact-table')
        .or(page.getByTestId('impact-none'))
        .or(page.getByTestId('impact-too-early'))
        .or(page.getByTestId('impact-error'));
      // Any of these states renders without error; this run must have produced the table.
      await outcome.first().waitFor();
      assert.ok((await page.locator('h1').innerText()).includes(annotation.text));
      // Nothing ran before the annotation and the workload ran after it (the harness waited
      // for its minute to end): the heaviest query is new.
      await page.getByTestId('impact-table').waitFor();
      const top = page.getByTestId('impact-row').filter({ hasText: expectTop });
      assert.equal(await top.first().getByTestId('verdict').innerText(), 'new');
    },
    { fullPage: false },
  );
});

test('the annotations list links to the impact', async (t) => {
  await step(t, 'annotations', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Annotations' })
      .click();
    const row = page.getByTestId('annotation-row').filter({ hasText: annotation.text });
    await row.waitFor();
    assert.match(await row.innerText(), /deploy/);
    await row.getByTestId('annotation-impact-link').click();
    await waitForUrl((url) => url.pathname === `/annotations/${annotation.id}`, 'the impact');
    await page.locator('h1', { hasText: annotation.text }).waitFor();
  });
});

test('create an annotation in the form, then delete it', async (t) => {
  await step(t, 'annotation-deleted', async () => {
    await page.goBack();
    await page.getByRole('form', { name: 'New annotation' }).waitFor();
    const text = `Browser check ${Date.now()}`;
    await page.getByTestId('annotation-text').fill(text);
    await page.getByLabel(/^Tags/).fill('e2e, check');
    await page.getByTestId('annotation-create').click();
    const row = page.getByTestId('annotation-row').filter({ hasText: text });
    await row.waitFor();
    assert.match(await row.innerText(), /e2e/);
    await page.locator('[data-testid="annotations-table"][aria-busy="false"]').waitFor();
    await screenshot('annotation-created');
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Confirm delete' }).click();
    await row.waitFor({ state: 'detached' });
  });
});

test('time to first render of the overview with 1,000 rows', async (t) => {
  const runs = [];
  const target = watch(await context.newPage());
  try {
    for (let run = 0; run < 3; run += 1) {
      await target.goto(new URL('/?size=1000', baseUrl).href, { waitUntil: 'commit' });
      // Polled every animation frame: the first frame with all 1,000 rows in the DOM.
      const rendered = await target.waitForFunction(
        () =>
          globalThis.document.querySelectorAll('[data-testid="query-row"]').length >= 1000 &&
          performance.now(),
        undefined,
        { timeout: TIMEOUT_MS, polling: 'raf' },
      );
      const total = await rendered.jsonValue();
      const api = await target.evaluate(() => {
        const entries = performance
          .getEntriesByType('resource')
          .filter((entry) => entry.name.includes('/api/v1/queries?'));
        const last = entries[entries.length - 1];
        return last ? { start: last.startTime, end: last.responseEnd } : null;
      });
      assert.ok(api, 'no /api/v1/queries request was timed');
      runs.push({ totalMs: total, apiMs: api.end - api.start, renderMs: total - api.end });
    }
    const median = (key) => [...runs.map((r) => r[key])].sort((a, b) => a - b)[1];
    const result = {
      rows: await target.getByTestId('query-row').count(),
      runs,
      medianTotalMs: Math.round(median('totalMs')),
      medianApiMs: Math.round(median('apiMs')),
      medianRenderMs: Math.round(median('renderMs')),
      how:
        'headless Chromium, /?size=1000 loaded 3 times with a cookie session (restored through /api/v1/me); totalMs = ' +
        'performance.now() at the first animation frame with 1,000 rows in the DOM (from ' +
        'navigation start); apiMs = the /api/v1/queries request; renderMs = totalMs - its responseEnd',
    };
    writeFileSync(
      join(artifacts, 'first-render-1000.json'),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    t.diagnostic(`first render with 1,000 rows: ${JSON.stringify(result)}`);
    assert.equal(result.rows, 1000);
    await screenshot('first-render-1000', target, false);
    assert.deepEqual(consoleErrors, [], 'the page logged errors');
  } finally {
    await target.close();
  }
});

async function openSettings() {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Settings' })
    .click();
  await page.getByTestId('instances-table').waitFor();
}

test('settings: add an instance, test its connection, delete it', async (t) => {
  await step(t, 'settings-instance', async () => {
    await openSettings();
    assert.match(await page.getByTestId('instances-table').innerText(), /mariadb-e2e/);
    await page.getByRole('button', { name: 'Add instance' }).click();
    const form = page.getByRole('form', { name: 'Add an instance' });
    await form.getByLabel('Name').fill('e2e-added');
    await form.getByLabel(/^DSN/).fill(dsn);
    // One default example policy: the one the agent-created instance got.
    assert.equal(await form.getByLabel('Examples').inputValue(), 'full');
    await form.getByRole('button', { name: 'Add instance' }).click();
    await form.waitFor({ state: 'detached' });
    const row = page.getByTestId('instance-row').filter({ hasText: 'e2e-added' });
    const agentMade = page.getByTestId('instance-row').filter({ hasText: 'mariadb-e2e' });
    assert.match(await agentMade.innerText(), /\bfull\b/);
    assert.match(await row.innerText(), /\bfull\b/);
    assert.match(
      await row.innerText(),
      /mysql:\/\/quanta_ro:\*\*\*@/,
      'the DSN is shown without its password',
    );
    await row.getByRole('button', { name: 'Test connection' }).click();
    const report = page.getByTestId('connection-report');
    await report.waitFor();
    assert.match(await report.innerText(), /Connected as/);
    assert.ok((await report.getByTestId('capability').count()) > 0, 'capabilities are listed');
    // Nothing fine by design is red for a least-privilege account: DML needs no write
    // privilege, and profiling is not the monitored server's (no target here).
    const capabilities = await report.getByTestId('capability').allInnerTexts();
    assert.deepEqual(
      capabilities.filter((line) => line.includes('✗')),
      [],
      'no capability of the least-privilege account is red',
    );
    assert.ok(
      capabilities.every((line) => !/explain_dml|profiling/.test(line)),
      capabilities.join('\n'),
    );
    // The account's grants, and that it has nothing beyond what Quanta needs.
    assert.match(await report.getByTestId('privileges').innerText(), /SELECT ON \*\.\*/);
    assert.match(await report.getByTestId('privileges').innerText(), /Least privilege/);
    assert.match(
      await report.getByTestId('execution-target').innerText(),
      /No execution target: EXPLAIN only/,
    );
    await screenshot('settings-instance-tested');
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
  });
});

test('settings: the execution target is shown and verified read-only', async (t) => {
  await step(t, 'settings-target', async () => {
    await openSettings();
    const row = page.getByTestId('instance-row').filter({ hasText: 'mariadb-e2e' });
    assert.match(
      await row.getByTestId('instance-target').innerText(),
      /mysql:\/\/quanta_exec:\*\*\*@/,
      'the execution target is shown without its password',
    );
    await row.getByRole('button', { name: 'Test connection' }).click();
    const target = page.getByTestId('execution-target');
    await target.waitFor();
    // Verified just now: only a verified target says whom it is read-only for.
    assert.match(await target.innerText(), /read-only for quanta_exec@%: read_only=ON/);
    // Profiling is checked where profiles run: on the target.
    assert.match(await target.getByTestId('target-capability').first().innerText(), /✓ profiling/);
    // The audit log names where the profile ran, not only the instance, and whom the CLI
    // created with which role.
    const audit = await page.getByTestId('audit-table').innerText();
    assert.match(audit, new RegExp(`cli created user “${userName}” as admin`));
    assert.ok(
      audit.includes(`of mariadb-e2e on the execution target ${targetAddress}: ok`),
      `the audit should name the execution target ${targetAddress}`,
    );
    await screenshot('settings-target');
  });
});

test('settings: the source counted in totals is shown and can be pinned', async (t) => {
  await step(t, 'settings-source', async () => {
    await openSettings();
    const row = page.getByTestId('instance-row').filter({ hasText: 'mariadb-e2e' });
    assert.match(await row.getByTestId('instance-source').innerText(), /\((auto|chosen)\)|auto/);
    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit mariadb-e2e' });
    await form.getByTestId('primary-source').selectOption('perfschema');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    assert.equal(await row.getByTestId('instance-source').innerText(), 'perfschema (chosen)');
    // Back to automatic: the slow log has reported (the imported log), so it counts at once.
    await row.getByRole('button', { name: 'Edit' }).click();
    await form.getByTestId('primary-source').selectOption('auto');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    assert.equal(await row.getByTestId('instance-source').innerText(), 'slowlog (auto)');
  });
});

test('settings: each source of each instance says how its agent is doing', async (t) => {
  await step(t, 'settings-agents', async () => {
    await openSettings();
    const agents = page.getByTestId('agents-table');
    await agents.waitFor();
    for (const source of ['slowlog', 'perfschema']) {
      const row = page
        .getByTestId('agent-row')
        .filter({ hasText: 'mariadb-e2e' })
        .filter({ hasText: source });
      assert.equal(await row.getByTestId('agent-state').innerText(), 'reporting', source);
      // The agent's version and host, its spool; the last batch when one came.
      assert.match(await row.getByTestId('agent-version').innerText(), /^\d+\.\d+\.\d+ on \S+/);
      assert.match(await row.getByTestId('agent-spool').innerText(), /waiting · \d+ dropped/);
      assert.match(await row.getByTestId('agent-last-batch').innerText(), /ago|just now|none yet/);
    }
    await agents.scrollIntoViewIfNeeded();
  });
});

test('settings: an instance links to its index plan, computed on request', async (t) => {
  await step(t, 'index-plan', async () => {
    await openSettings();
    const row = page.getByTestId('instance-row').filter({ hasText: 'mariadb-e2e' });
    await row.getByTestId('instance-index-plan').click();
    await page.getByRole('heading', { name: 'Index plan: mariadb-e2e' }).waitFor();
    await page.getByTestId('plan-request').click();
    // The worker plans the imported workload: the tables to change, or that none needs to.
    await page
      .locator('[data-testid="plan-summary"], [data-testid="plan-none"]')
      .first()
      .waitFor({ timeout: 90_000 });
    // Tables with nothing to change are one line, closed: no card of theirs is on screen.
    const folded = page.getByTestId('plan-unchanged');
    assert.match(await folded.locator('summary').innerText(), /^No change for \d+ tables?: /);
    assert.equal(await folded.getAttribute('open'), null);
    const visibleCards = await page
      .getByTestId('plan-table')
      .evaluateAll((cards) => cards.filter((card) => card.checkVisibility()).length);
    const toChange = await page.getByTestId('plan-summary').count();
    assert.equal(visibleCards > 0, toChange > 0, 'only tables to change are shown in full');
    const height = await page.evaluate(() => globalThis.document.documentElement.scrollHeight);
    writeFileSync(
      join(artifacts, 'index-plan-height.json'),
      `${JSON.stringify({ scrollHeightPx: height, visibleCards }, null, 2)}\n`,
    );
    t.diagnostic(`index plan page: ${height} px tall, ${visibleCards} table cards shown`);
    await screenshot('index-plan-page');
    // The overview links to the plan too.
    await page.goto(new URL('/', baseUrl).href);
    await waitForTable();
    await page.getByTestId('index-plan-links').getByRole('link', { name: 'mariadb-e2e' }).click();
    await page.getByRole('heading', { name: 'Index plan: mariadb-e2e' }).waitFor();
    // Back where the settings steps that follow expect to be.
    await page.getByRole('link', { name: '← Instances' }).click();
    await page.getByTestId('instances-table').waitFor();
  });
});

test('settings: a chat channel, its test message and its deliveries', async (t) => {
  await step(t, 'settings-channel', async () => {
    await page.getByRole('button', { name: 'Add channel' }).click();
    const form = page.getByRole('form', { name: 'Add a channel' });
    await form.getByLabel('Name').fill('e2e-hook');
    await form.getByLabel(/^Webhook URL/).fill(receiver);
    await form.getByRole('button', { name: 'Add channel' }).click();
    await form.waitFor({ state: 'detached' });
    const row = page.getByTestId('channel-row').filter({ hasText: 'e2e-hook' });
    await row.getByRole('button', { name: 'Send test message' }).click();
    const result = page.getByTestId('test-message-result');
    await result.waitFor();
    assert.match(await result.innerText(), /Delivered \(HTTP 200\)/);
    const attempt = page.getByTestId('delivery-attempt').first();
    await attempt.waitFor();
    assert.match(await attempt.innerText(), /200/);
    await page.getByTestId('deliveries-table').scrollIntoViewIfNeeded();
  });
});

test('settings: create an API token, see its secret once, revoke it', async (t) => {
  await step(t, 'settings-token', async () => {
    const form = page.getByRole('form', { name: 'Create a token' });
    await form.getByLabel('Name').fill('e2e-reader');
    await form.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.getByTestId('token-value').innerText();
    assert.ok(secret.length >= 20, `a secret should be shown, got ${secret}`);
    const row = page.getByTestId('token-row').filter({ hasText: 'e2e-reader' });
    assert.match(await row.getByTestId('token-revoked').innerText(), /^no$/);
    await screenshot('settings-token-created');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('token-secret').waitFor({ state: 'detached' });
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke' }).waitFor({ state: 'detached' });
    assert.doesNotMatch(await row.getByTestId('token-revoked').innerText(), /^no$/);
    // Every one of these writes is in the audit log.
    await page.getByTestId('audit-table').scrollIntoViewIfNeeded();
    assert.match(await page.getByTestId('audit-table').innerText(), /token/);
  });
});

/** Waits until a form control holds `value` (a list refetches after a write). */
async function waitForValue(control, value) {
  for (let tries = 0; tries < 100 && (await control.inputValue()) !== value; tries += 1) {
    await page.waitForTimeout(100);
  }
  assert.equal(await control.inputValue(), value);
}

test("an admin changes a user's role and disables them from the settings", async (t) => {
  // The user signs in in a browser of their own; the admin acts on this page.
  const memberContext = await browser.newContext();
  const member = await memberContext.newPage();
  member.setDefaultTimeout(TIMEOUT_MS);
  try {
    await step(t, 'settings-user-lifecycle', async () => {
      const form = page.getByRole('form', { name: 'Add a user' });
      await form.getByLabel('Name').fill('e2e-member');
      await form.getByLabel('Password').fill(password);
      await form.getByRole('button', { name: 'Add user' }).click();
      const row = page.getByTestId('user-row').filter({ hasText: 'e2e-member' });
      await row.waitFor();
      assert.equal(await row.getByTestId('user-state').innerText(), 'active');

      await member.goto(`${baseUrl}/settings`);
      const signIn = member.getByRole('form', { name: 'Sign in with a password' });
      await signIn.getByLabel('Name').fill('e2e-member');
      await signIn.getByLabel('Password').fill(password);
      await signIn.getByRole('button', { name: 'Sign in', exact: true }).click();
      await member.getByTestId('instances-table').waitFor();
      assert.equal(await member.getByTestId('tokens').count(), 0, 'a viewer sees no tokens');

      // The role change applies to the member's open session.
      const patched = page.waitForResponse(
        (response) =>
          response.request().method() === 'PATCH' && response.url().includes('/api/v1/users/'),
      );
      await row.getByLabel('Role of e2e-member').selectOption('admin');
      assert.equal((await patched).status(), 200);
      await waitForValue(row.getByLabel('Role of e2e-member'), 'admin');
      await member.reload();
      await member.getByTestId('tokens').waitFor();

      // Disabled: the member's session ends at once; the row says so.
      page.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: 'Disable' }).click();
      await row.getByRole('button', { name: 'Enable' }).waitFor();
      assert.match(await row.getByTestId('user-state').innerText(), /^disabled /);
      assert.equal(await row.getByTestId('user-sessions').innerText(), '0');
      await member.reload();
      await member.getByRole('form', { name: 'Sign in with a password' }).waitFor();
      await screenshot('settings-user-disabled', member);

      // The audit log has both changes with their details.
      await page.getByTestId('audit-table').scrollIntoViewIfNeeded();
      const audit = await page.getByTestId('audit-table').innerText();
      // As sentences (who did what to whom), not route templates.
      assert.match(audit, /changed user “e2e-member”: role viewer → admin/);
      assert.match(audit, /changed user “e2e-member”: disabled false → true/);
      assert.doesNotMatch(audit, /\/api\/v1\//);
    });
  } finally {
    await memberContext.close();
  }
});

test('an admin adds a viewer, who sees no admin actions', async (t) => {
  await step(t, 'viewer-settings', async () => {
    const form = page.getByRole('form', { name: 'Add a user' });
    await form.getByLabel('Name').fill('e2e-viewer');
    await form.getByLabel('Password').fill(password);
    await form.getByRole('button', { name: 'Add user' }).click();
    await page.getByTestId('users-table').getByText('e2e-viewer').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    const signIn = page.getByRole('form', { name: 'Sign in with a password' });
    await signIn.getByLabel('Name').fill('e2e-viewer');
    await signIn.getByLabel('Password').fill(password);
    await signIn.getByRole('button', { name: 'Sign in', exact: true }).click();
    // Back on the settings (the address is kept): the instances, read only.
    await page.getByTestId('instances-table').waitFor();
    assert.match(await page.getByTestId('user-name').innerText(), /e2e-viewer \(viewer\)/);
    assert.equal(await page.getByRole('button', { name: 'Add instance' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Test connection' }).count(), 0);
    assert.equal(await page.getByTestId('channels').count(), 0);
    assert.equal(await page.getByTestId('tokens').count(), 0);

    // A viewer reads runs but cannot request one (the diagnose scope).
    await page.goto(new URL('/', baseUrl).href);
    await waitForTable();
    await page.getByTestId('query-link').first().click();
    await page.getByTestId('tab-profile').click();
    await page.getByTestId('profile-not-collected').waitFor();
    await page.getByTestId('request-needs-diagnose').waitFor();
    assert.equal(await page.getByTestId('request-collection').count(), 0);
    await page.getByTestId('tab-explain').click();
    await page.getByTestId('explain').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Collect again' }).count(), 0);
    await screenshot('viewer-cannot-request');
    await openSettings(); // where the next test expects the session to be
  });
});

test('sign out ends the session; an API token signs in too', async (t) => {
  await step(t, 'signed-out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in', exact: true }).waitFor();
    const cookies = await context.cookies(baseUrl);
    assert.equal(
      cookies.find((c) => c.name === 'quanta_session'),
      undefined,
    );
  });
  await step(t, 'token-sign-in', async () => {
    await page.getByRole('button', { name: 'Sign in with an API token' }).click();
    const form = page.getByRole('form', { name: 'Sign in with an API token' });
    await form.getByLabel('API token').fill(token);
    await form.getByRole('button', { name: 'Sign in', exact: true }).click();
    // Signing in keeps the address: back on the settings, as the token's user.
    await page.getByTestId('instances-table').waitFor();
    assert.equal(await page.getByTestId('user-name').innerText(), 'admin');
    assert.equal(
      await page.evaluate(() => globalThis.localStorage.getItem('quanta.token')),
      token,
      'the token should be kept in localStorage under quanta.token',
    );
  });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('form', { name: 'Sign in', exact: true }).waitFor();
  assert.equal(await page.evaluate(() => globalThis.localStorage.getItem('quanta.token')), null);
  assert.deepEqual(consoleErrors, [], 'the page logged errors');
});

test('the API docs work without a network: Swagger UI and ReDoc from the app itself', async (t) => {
  await step(t, 'api-docs', async () => {
    const docs = watch(await context.newPage());
    const origin = new URL(baseUrl).origin;
    const elsewhere = [];
    // Nothing may leave the app's origin: a database network is often offline.
    await docs.route('**/*', (route) => {
      if (new URL(route.request().url()).origin === origin) return route.continue();
      elsewhere.push(route.request().url());
      return route.abort();
    });
    try {
      await docs.goto(new URL('/docs', baseUrl).href);
      await docs.locator('.swagger-ui .info .title').filter({ hasText: 'Quanta' }).waitFor();
      await screenshot('api-docs-swagger', docs);
      await docs.goto(new URL('/redoc', baseUrl).href);
      await docs.locator('h1').filter({ hasText: 'Quanta' }).first().waitFor();
      assert.deepEqual(elsewhere, [], 'the docs pages load nothing from another host');
    } finally {
      await docs.close();
    }
  });
});
