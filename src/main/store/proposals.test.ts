import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './db.ts';
import { createStore, type Store } from './index.ts';
import type { NewProposal } from './proposals.ts';

const ANN = { id: 'ann', name: 'Ann' };
const BOSS = { id: 'boss', name: 'Boss' };

function withStore(fn: (store: Store) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'sb-proposals-'));
  const store = createStore(openDatabase(join(dir, 'db.sqlite')));
  try {
    fn(store);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const proposal = (o: Partial<NewProposal> = {}): NewProposal => ({
  kind: 'entry',
  source: 'handoff',
  question: 'How do I delete my account?',
  answer: 'Settings > Account > Delete.',
  entryId: null,
  conversationId: 'c1',
  messageIds: ['m1', 'r1'],
  operator: ANN,
  now: 1000,
  ...o,
});

test('a proposal keeps its provenance and is pending until decided, once', () => {
  withStore((store) => {
    const id = store.proposals.add(proposal());
    const p = store.proposals.get(id)!;
    assert.deepEqual([p.state, p.conversationId, p.messageIds, p.operator, p.createdAt], ['pending', 'c1', ['m1', 'r1'], ANN, 1000]);
    assert.equal(store.proposals.pendingCount(), 1);
    assert.equal(store.proposals.decide([id], { state: 'rejected', by: BOSS, at: 2000, reason: 'too specific', resultEntryId: null }), 1);
    // A decided proposal is not decided again, nor edited.
    assert.equal(store.proposals.decide([id], { state: 'approved', by: BOSS, at: 3000, reason: null, resultEntryId: 5 }), 0);
    assert.equal(store.proposals.edit(id, { question: 'q', answer: 'a', entryId: null }, 4000), false);
    const after = store.proposals.get(id)!;
    assert.deepEqual([after.state, after.reason, after.decidedBy, after.decidedAt], ['rejected', 'too specific', BOSS, 2000]);
    assert.equal(store.proposals.list('rejected', 10).length, 1);
    assert.equal(store.proposals.pendingCount(), 0);
  });
});

test('an edit naming an entry makes the proposal a phrasing for it', () => {
  withStore((store) => {
    const id = store.proposals.add(proposal());
    assert.ok(store.proposals.edit(id, { question: 'remove my account', answer: 'x', entryId: 3 }, 1500));
    const p = store.proposals.get(id)!;
    assert.deepEqual([p.kind, p.entryId, p.question, p.updatedAt], ['phrasing', 3, 'remove my account', 1500]);
  });
});

test('pendingChanges: like questions are one candidate entry with the others as its phrasings; phrasings by entry; decided ones left out', () => {
  withStore((store) => {
    store.proposals.add(proposal({ question: 'How do I delete my account?', now: 1 }));
    store.proposals.add(proposal({ question: 'how can I delete my account', answer: 'Open Settings, then Delete account.', now: 2 }));
    store.proposals.add(proposal({ question: 'Do you ship to Canada?', answer: 'Yes, in 7 days.', now: 3 }));
    store.proposals.add(proposal({ kind: 'phrasing', entryId: 9, question: 'where is my parcel', now: 4 }));
    const gone = store.proposals.add(proposal({ question: 'Rejected one?', now: 5 }));
    store.proposals.decide([gone], { state: 'rejected', by: BOSS, at: 6, reason: 'no', resultEntryId: null });
    const changes = store.proposals.pendingChanges();
    assert.deepEqual(changes, {
      entries: [
        { question: 'how can I delete my account', answer: 'Open Settings, then Delete account.', phrasings: ['How do I delete my account?'] },
        { question: 'Do you ship to Canada?', answer: 'Yes, in 7 days.', phrasings: [] },
      ],
      phrasings: [{ entryId: 9, text: 'where is my parcel' }],
    });
  });
});
