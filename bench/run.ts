import { runIngest } from './ingest.ts';
import { runDelivery } from './delivery.ts';
import { runConsole } from './console.ts';
import { runFlood } from './flood.ts';
import { runKbScale } from './kb-scale.ts';
import { runSearchStall } from './search-stall.ts';
import { runScale } from './scale/run.ts';
import { runFloor } from './floor/run.ts';
import { runStartup } from './startup/run.ts';
import { runDeliveryStarvation } from './delivery-starvation.ts';
import { runHostile } from './hostile/run.ts';
import { runTeam } from './team/run.ts';
import { runKbQuality } from './kb-quality.ts';
import { runLearnProposer } from './learn-proposer.ts';
import { runPgDrivers } from './pg-drivers.ts';
import { runPgLeases } from './pg-leases.ts';
import { runPgStaffWait } from './pg-staff-wait.ts';
import { runNodes } from './nodes.ts';

// npm run bench [-- ingest]: each benchmark prints its figures and its ratio to its baseline.
const benches: Record<string, () => Promise<string>> = {
  ingest: runIngest,
  delivery: runDelivery,
  console: runConsole,
  flood: runFlood,
  'kb-scale': runKbScale,
  'search-stall': runSearchStall,
  scale: runScale,
  floor: runFloor,
  startup: runStartup,
  'delivery-starvation': runDeliveryStarvation,
  hostile: runHostile,
  team: runTeam,
  'kb-quality': runKbQuality,
  'learn-proposer': runLearnProposer,
  'pg-drivers': runPgDrivers,
  'pg-leases': runPgLeases,
  'pg-staff-wait': runPgStaffWait,
  nodes: runNodes,
};
// A `--flag value` pair is a benchmark's option (kb-quality --embeddings-url URL), not a name.
const wanted = process.argv.slice(2).filter((a, i, all) => !a.startsWith('-') && !(i > 0 && all[i - 1]!.startsWith('--') && !all[i - 1]!.includes('=')));
for (const name of wanted.length ? wanted : Object.keys(benches)) {
  const bench = benches[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"; available: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  console.log(await bench());
  console.log();
}
