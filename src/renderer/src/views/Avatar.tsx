/** Twelve backgrounds that all carry white text at 4.9:1 or better, in light and dark themes alike. */
export const AVATAR_COLOURS = 12;

/** The same id always gets the same colour (FNV-1a over its UTF-16 units). */
export function avatarColour(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h % AVATAR_COLOURS;
}

/** "Alice Chen" -> "AC", "bob" -> "B", "王小明" -> "王"; digits and other scripts as they come. */
export function initials(name: string): string {
  const words = name
    .trim()
    .split(/[\s._@-]+/)
    .filter(Boolean);
  const first = (w: string): string => Array.from(w)[0] ?? '';
  const letters = words.length > 1 ? first(words[0]!) + first(words[1]!) : first(words[0] ?? '?');
  return letters.toLocaleUpperCase() || '?';
}

/**
 * A round badge with a person's initials. Decorative: the name is always written beside it, so
 * screen readers skip it. `id` picks the colour (stable per person), `name` the letters.
 */
export function Avatar({ id, name, size = 'md' }: { id: string; name: string | null; size?: 'sm' | 'md' }) {
  return (
    <span className={`avatar avatar-${size} avatar-c${avatarColour(id)}`} aria-hidden="true">
      {initials(name || id)}
    </span>
  );
}
