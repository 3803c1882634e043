/**
 * Initials on a colour derived from the id: the same person looks the same in every list. Minimal
 * version (issue 9, views); decorative, so hidden from assistive technology: the name is beside it.
 */
function initials(name: string): string {
  const words = name.trim().split(/[\s._@-]+/).filter(Boolean);
  if (words.length === 0) return '?';
  // CJK names have no spaces: the first character is the usual short form.
  if (/^[\u3400-\u9fff]/.test(words[0]!)) return words[0]!.slice(0, 1);
  const letters = words.length > 1 ? [words[0]!, words[words.length - 1]!].map((w) => [...w][0]) : [...words[0]!].slice(0, 2);
  return letters.join('').toUpperCase();
}

function hue(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return h % 360;
}

export function Avatar({ id, name, size = 32 }: { id: string; name: string | null; size?: number }) {
  // Lightness 30 %: white initials keep at least 4.5:1 on every hue.
  const style = { width: size, height: size, fontSize: Math.round(size * 0.4), ['--avatar-hue' as string]: hue(id) };
  return (
    <span className="avatar" style={style} aria-hidden="true">
      {initials(name || id)}
    </span>
  );
}
