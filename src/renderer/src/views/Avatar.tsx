import { initials } from '../../../shared/console-display.ts';

/** Twelve backgrounds that all carry white text at 4.9:1 or better, in light and dark themes alike. */
export const AVATAR_COLOURS = 12;

/** The same id always gets the same colour (FNV-1a over its UTF-16 units). */
export function avatarColour(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h % AVATAR_COLOURS;
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
