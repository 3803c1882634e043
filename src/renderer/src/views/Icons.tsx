/**
 * Small line icons for the header's switches. Decorative: every button that shows one also shows
 * its name as text (hidden only where the row is too crowded, and then still read) and as a title.
 */
const props = { width: 16, height: 16, viewBox: '0 0 16 16', fill: 'none', stroke: 'currentColor', strokeWidth: 1.5, strokeLinecap: 'round', strokeLinejoin: 'round', 'aria-hidden': true } as const;

export function MoonIcon() {
  return (
    <svg {...props}>
      <path d="M13.5 9.5A6 6 0 0 1 6.5 2.5a6 6 0 1 0 7 7Z" />
    </svg>
  );
}

export function BellIcon() {
  return (
    <svg {...props}>
      <path d="M4 11V7a4 4 0 0 1 8 0v4l1.5 1.5h-11Z" />
      <path d="M6.5 14a1.5 1.5 0 0 0 3 0" />
    </svg>
  );
}

export function SpeakerIcon() {
  return (
    <svg {...props}>
      <path d="M2.5 6h2.5l3.5-3v10l-3.5-3H2.5Z" />
      <path d="M11 5.5a3.5 3.5 0 0 1 0 5M12.8 3.8a6 6 0 0 1 0 8.4" />
    </svg>
  );
}

export function KeyboardIcon() {
  return (
    <svg {...props}>
      <rect x="1.5" y="4" width="13" height="8.5" rx="1.5" />
      <path d="M4 7h.01M6.5 7h.01M9 7h.01M11.5 7h.01M5 10h6" />
    </svg>
  );
}

export function PersonIcon() {
  return (
    <svg {...props}>
      <circle cx="8" cy="5.5" r="2.75" />
      <path d="M2.75 14a5.25 5.25 0 0 1 10.5 0" />
    </svg>
  );
}

/** "Viewing": an eye, unlike the hollow circle of "offline". */
export function EyeIcon() {
  return (
    <svg {...props} width={14} height={14}>
      <path d="M1.5 8S4 3.5 8 3.5 14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8Z" />
      <circle cx="8" cy="8" r="2" />
    </svg>
  );
}
