import { Fragment, type ReactNode } from 'react';

/** A translated sentence with commands in backticks: each command as <code>, never a literal backtick. */
export function withCode(text: string): ReactNode {
  return text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : <Fragment key={i}>{part}</Fragment>));
}
