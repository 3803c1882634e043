/**
 * Whether a key press is a console shortcut: a plain key (no Ctrl, Cmd, Alt or Meta: those belong
 * to the browser and the system, e.g. Ctrl+S is "save page", never "stop"), not typed into a
 * field, and not while a modal dialog owns the keyboard. Shift stays allowed: `?` is Shift+/.
 */
export function isShortcut(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing || e.defaultPrevented) return false;
  if (isTyping(e.target)) return false;
  return document.querySelector('dialog[open]') === null;
}

/** Inputs, textareas, selects and editable content keep their keys. */
export function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target.closest('input, textarea, select') !== null;
}
