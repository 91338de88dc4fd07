// Fails when src/api/schema.d.ts is not what openapi-typescript generates from
// openapi.json, i.e. someone edited it by hand or forgot `npm run gen:api`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(root, 'src', 'api', 'schema.d.ts');
const cli = join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');

function check(scratch) {
  const fresh = join(scratch, 'schema.d.ts');
  try {
    execFileSync(process.execPath, [cli, join(root, 'openapi.json'), '-o', fresh], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } catch {
    return (
      'openapi-typescript could not generate types from openapi.json (its error is above): ' +
      'the schema the backend exports must be a valid OpenAPI document.'
    );
  }
  if (readFileSync(fresh, 'utf8') !== readFileSync(committed, 'utf8')) {
    return 'src/api/schema.d.ts is out of date with openapi.json: run `npm run gen:api` and commit the result.';
  }
  return null;
}

const scratch = mkdtempSync(join(tmpdir(), 'quanta-check-api-'));
try {
  const problem = check(scratch);
  if (problem) {
    console.error(problem);
    process.exitCode = 1;
  } else {
    console.log('src/api/schema.d.ts matches openapi.json.');
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
