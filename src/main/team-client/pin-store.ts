import { join } from 'node:path';
import { z } from 'zod';
import { fingerprintText } from '../../shared/team-server.ts';
import { readJsonFile, writeJsonFile } from './json-file.ts';
import { normalizeFingerprint, pinKey } from './fingerprint.ts';

export const PINS_FILE = 'team-pins.json';

const pinsFile = z.object({ pins: z.record(z.string().min(1).max(255), fingerprintText) });

/** Host → the SHA-256 fingerprint its user confirmed. */
export type Pins = Readonly<Record<string, string>>;

/**
 * The self-signed certificates this user confirmed, by host (trust on first use, as SSH's
 * known_hosts): a pinned host is accepted with that certificate only, whatever else it shows.
 */
export function createPinStore(dataDir: string) {
  const file = join(dataDir, PINS_FILE);
  // A Map, not an object: a host is any string, "__proto__" included.
  const read = (): Map<string, string> => new Map(Object.entries(readJsonFile(file, pinsFile)?.pins ?? {}));
  const write = (pins: Map<string, string>): void => writeJsonFile(file, { pins: Object.fromEntries(pins) });
  return {
    all(): Pins {
      return Object.fromEntries(read());
    },
    get(host: string): string | null {
      return read().get(pinKey(host)) ?? null;
    },
    pin(host: string, fingerprint: string): void {
      const pins = read();
      pins.set(pinKey(host), normalizeFingerprint(fingerprint));
      write(pins);
    },
    /** Returns whether there was one. */
    forget(host: string): boolean {
      const pins = read();
      if (!pins.delete(pinKey(host))) return false;
      write(pins);
      return true;
    },
  };
}

export type PinStore = ReturnType<typeof createPinStore>;
