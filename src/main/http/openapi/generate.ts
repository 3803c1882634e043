import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderOpenApi } from './document.ts';

/** `npm run openapi` writes docs/openapi.json; `-- --check` only says whether it is up to date. */
export const OPENAPI_PATH = fileURLToPath(new URL('../../../../docs/openapi.json', import.meta.url));

function committed(): string | null {
  try {
    return readFileSync(OPENAPI_PATH, 'utf8');
  } catch {
    return null;
  }
}

if (import.meta.main) {
  const text = renderOpenApi();
  if (process.argv.includes('--check')) {
    if (committed() !== text) {
      console.error(`${OPENAPI_PATH} is stale: run npm run openapi`);
      process.exit(1);
    }
    console.log(`${OPENAPI_PATH} is up to date`);
  } else {
    mkdirSync(dirname(OPENAPI_PATH), { recursive: true });
    writeFileSync(OPENAPI_PATH, text);
    console.log(`wrote ${OPENAPI_PATH}`);
  }
}
