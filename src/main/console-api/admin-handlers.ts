import type { StoreContract } from '../store/contract.ts';
import type { InTransaction } from '../store/in-transaction.ts';
import type { clientAdmin } from '../auth/client-admin.ts';
import { ClientAdminError } from '../auth/client-admin.ts';
import type { Engine } from '../engines/engine.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ClientView, ConsoleHandlers, KbEntryView } from '../../shared/console-api.ts';
import { clientSettingsSchema, DEFAULT_CLIENT_SETTINGS, type ClientSettings } from '../../shared/client-settings.ts';
import { checkSendUrl } from '../../shared/protocol/send-url.ts';
import { BUILTIN_ENGINE } from '../../shared/engine-config.ts';
import { askEngine } from '../engines/ask.ts';
import { parsePairs, ImportError } from '../cli/kb-import.ts';
import { ConsoleError } from './handlers.ts';
import type { Caller } from '../../shared/console-roles.ts';

type AdminStore = Pick<StoreContract, 'clients' | 'engines' | 'kb'>;

export interface AdminDeps {
  store: AdminStore;
  /** The import's entries as one transaction. */
  inTransaction: InTransaction<Pick<StoreContract, 'kb'>>;
  clock: Clock;
  admin: ReturnType<typeof clientAdmin>;
  /** This process changed clients: the cache must not wait for its next check. */
  invalidateClients: () => void;
  engine: Engine;
  engineTimeoutMs: number;
  fallbackText: string;
  /** Records a client change in the audit (never a secret). */
  auditClientChange: (caller: Caller, detail: Record<string, unknown>) => Promise<void>;
}

type AdminMethods =
  | 'listEngines'
  | 'listClients'
  | 'addClient'
  | 'rotateClient'
  | 'setClientEnabled'
  | 'updateClientSettings'
  | 'listKb'
  | 'saveKb'
  | 'removeKb'
  | 'importKb'
  | 'tryKb';

async function settingsFrom(store: AdminStore, base: ClientSettings, patch: Record<string, unknown>): Promise<ClientSettings> {
  const parsed = clientSettingsSchema.safeParse({ ...base, ...patch });
  if (!parsed.success) throw new ConsoleError('invalid_input', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  if (parsed.data.engine !== BUILTIN_ENGINE && !(await store.engines.get(parsed.data.engine))) {
    throw new ConsoleError('invalid_input', `engine: no engine "${parsed.data.engine}"; use "${BUILTIN_ENGINE}" or a configured one`);
  }
  if (parsed.data.sendUrl !== undefined) {
    const url = checkSendUrl(parsed.data.sendUrl, undefined);
    // Named as the form labels it, with the value typed, since the console shows this text as is.
    if (!url.ok) throw new ConsoleError('invalid_input', `Default send_url "${parsed.data.sendUrl}": ${url.message}`);
  }
  return parsed.data;
}

/** Client and knowledge-base management from the console. */
export function createAdminHandlers(deps: AdminDeps): Pick<ConsoleHandlers, AdminMethods> {
  const { store, clock } = deps;
  const view = async (id: string): Promise<ClientView> => {
    const c = await store.clients.get(id);
    if (!c) throw new ConsoleError('not_found', `no client "${id}"`);
    return { id: c.id, enabled: c.enabled, settings: c.settings, secrets: (await store.clients.activeSecrets(id)).map((s) => ({ hint: s.hint, createdAt: s.createdAt })), createdAt: c.createdAt };
  };
  const admin = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      const result = await fn();
      deps.invalidateClients();
      return result;
    } catch (error) {
      if (error instanceof ClientAdminError) throw new ConsoleError(error.code, error.message);
      throw error;
    }
  };
  const kbView = async (id: number): Promise<KbEntryView> => {
    const e = await store.kb.get(id);
    if (!e) throw new ConsoleError('not_found', `no knowledge-base entry ${id}`);
    return { id: e.id, question: e.question, answer: e.answer, phrasings: e.phrasings, updatedAt: e.updatedAt };
  };

  return {
    async listEngines() {
      return [
        { name: BUILTIN_ENGINE, model: null, baseUrl: null, hasKey: false },
        ...(await store.engines.list()).map((e) => ({ name: e.name, model: e.config.model ?? null, baseUrl: e.config.baseUrl, hasKey: e.apiKeySealed !== null })),
      ];
    },
    async listClients() {
      const views: ClientView[] = [];
      for (const c of await store.clients.list()) views.push(await view(c.id));
      return views;
    },
    async addClient(input, caller) {
      const settings = await settingsFrom(store, DEFAULT_CLIENT_SETTINGS, input.settings);
      const secret = await admin(() => deps.admin.add(input.id, settings, clock.now()));
      await deps.auditClientChange(caller, { client: input.id, change: 'add' });
      return { id: input.id, secret };
    },
    async rotateClient(input, caller) {
      const rotated = await admin(() => deps.admin.rotate(input.id, clock.now(), input.retirePrevious));
      await deps.auditClientChange(caller, { client: input.id, change: 'rotate', retired: rotated.retired });
      return { id: input.id, ...rotated };
    },
    async setClientEnabled(input, caller) {
      await admin(() => deps.admin.setEnabled(input.id, input.enabled, clock.now()));
      await deps.auditClientChange(caller, { client: input.id, change: input.enabled ? 'enable' : 'disable' });
      return view(input.id);
    },
    async updateClientSettings(input, caller) {
      const settings = await settingsFrom(store, (await view(input.id)).settings as ClientSettings, input.settings);
      await admin(() => deps.admin.setSettings(input.id, settings, clock.now()));
      await deps.auditClientChange(caller, { client: input.id, change: 'settings', settings: input.settings });
      return view(input.id);
    },
    async listKb(input) {
      const entries = input.search ? await store.kb.search(input.search, input.limit) : await store.kb.list(input.limit);
      return entries.map((e) => ({ id: e.id, question: e.question, answer: e.answer, phrasings: e.phrasings, updatedAt: e.updatedAt }));
    },
    async saveKb(input) {
      if (input.id === undefined) return kbView(await store.kb.add(input.question, input.answer, clock.now(), input.phrasings ?? []));
      if (!(await store.kb.update(input.id, input.question, input.answer, clock.now(), input.phrasings))) throw new ConsoleError('not_found', `no knowledge-base entry ${input.id}`);
      return kbView(input.id);
    },
    async removeKb(input) {
      return { removed: await store.kb.remove(input.id) };
    },
    async importKb(input) {
      let pairs;
      try {
        pairs = parsePairs(input.fileName, input.text);
      } catch (error) {
        if (error instanceof ImportError) throw new ConsoleError('invalid_input', `import refused, nothing was imported: ${error.message}`);
        throw error;
      }
      const now = clock.now();
      await deps.inTransaction(async (tx) => {
        for (const p of pairs) await tx.kb.add(p.question, p.answer, now, p.phrasings);
      });
      return { imported: pairs.length };
    },
    async tryKb(input) {
      const answer = await askEngine(
        deps.engine,
        { purpose: 'suggestion', channel: 'web', isGroup: false, context: [{ role: 'customer', speaker: null, content: input.question, at: clock.now() }], fallbackText: deps.fallbackText },
        deps.engineTimeoutMs,
        clock,
      );
      const sources = [];
      for (const s of answer.sources) sources.push({ id: s.id, score: s.score, question: (await store.kb.get(s.id))?.question ?? '' });
      return {
        content: answer.content,
        handoff: answer.handoff,
        confidence: answer.confidence,
        cause: answer.cause ?? null,
        sources,
      };
    },
  };
}
