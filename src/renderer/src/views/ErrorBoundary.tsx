import { Component, type ReactNode } from 'react';

interface Props {
  /** What shows instead of the children once they threw while rendering. */
  fallback: (error: Error) => ReactNode;
  /** A new key (another conversation, another view) gives the children a fresh try. */
  resetKey?: string;
  children: ReactNode;
}

interface State {
  error: Error | null;
  key: string | undefined;
}

/**
 * Contains a render failure to what failed: one transcript entry or one view, never the whole
 * console. A message is stored JSON from an integrator; whatever shape it has, the agent keeps
 * a working console, and sees which entry could not be shown.
 */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  static getDerivedStateFromProps(props: Props, state: State): Partial<State> | null {
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
  }

  override componentDidCatch(error: unknown): void {
    console.error('switchboard console: a part of the page could not be displayed', error);
  }

  override render(): ReactNode {
    return this.state.error ? this.props.fallback(this.state.error) : this.props.children;
  }
}
