import type { KbEntryView } from '../../../shared/console-api.ts';

/** A choice of knowledge-base entries, "#id question", after the caller's first (empty) option. */
export function EntryOptions({ kb }: { kb: readonly KbEntryView[] }) {
  return (
    <>
      {kb.map((e) => (
        <option key={e.id} value={e.id}>
          #{e.id} {e.question}
        </option>
      ))}
    </>
  );
}

/**
 * A labelled file input that hands over the chosen file's name and text, then clears itself so the
 * same file can be chosen again.
 */
export function TextFilePicker({ label, accept, onText }: { label: string; accept: string; onText: (fileName: string, text: string) => void }) {
  return (
    <label className="file">
      {label}
      <input
        type="file"
        accept={accept}
        onChange={(e) => {
          const file = e.target.files?.[0];
          if (file) void file.text().then((text) => onText(file.name, text));
          e.target.value = '';
        }}
      />
    </label>
  );
}
