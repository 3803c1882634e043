/**
 * `secrets rotate-key` on a data folder whose key is in KEY_FILE, killed (SIGKILL: no clean-up,
 * no rollback in this process) at STEP: what a power cut or an OOM kill does mid-rotation.
 * Usage: node rotate-then-crash.ts DATA_DIR KEY_FILE STEP
 */
import { openDatabase } from '../../src/main/store/db.ts';
import { createStore } from '../../src/main/store/index.ts';
import { databasePath } from '../../src/main/store/data-dir.ts';
import { openKeyring } from '../../src/main/auth/secret-box.ts';
import { secretsCommand } from '../../src/main/cli/secrets-commands.ts';
import { sqliteTarget } from '../../src/main/cli/store-target.ts';
import { resolveKeySource } from '../../src/main/auth/sealing-key.ts';
import type { RotationHooks } from '../../src/main/auth/key-rotation.ts';

const [dataDir, keyFile, step] = process.argv.slice(2) as [string, string, keyof RotationHooks];
const store = createStore(openDatabase(databasePath(dataDir)));
const ring = openKeyring(resolveKeySource({ flagFile: keyFile, env: {}, dataDir }));
await secretsCommand(sqliteTarget(store), () => ring, ['rotate-key'], {}, { [step]: () => process.kill(process.pid, 'SIGKILL') });
console.log('not killed');
