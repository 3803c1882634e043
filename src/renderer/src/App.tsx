import { useEffect, useState } from 'react';

interface Status {
  endpoint: string;
  state: string;
}

/** Minimal status page until the operator console lands: where the endpoint listens. */
export function App() {
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const fromHash = decodeURIComponent(location.hash.slice(1));
    if (fromHash) {
      setStatus({ endpoint: fromHash, state: 'running' });
      return;
    }
    fetch('/api/status', { method: 'POST' })
      .then((r) => (r.ok ? (r.json() as Promise<{ value: { endpoint: string } }>) : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((r) => setStatus({ endpoint: r.value.endpoint, state: 'running' }), (e: Error) => setError(e.message));
  }, []);

  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', padding: '2rem', maxWidth: 720 }}>
      <h1>Switchboard</h1>
      {error && <p role="alert">Cannot reach the service: {error}. Is it running?</p>}
      {status && (
        <p>
          Message endpoint <code>{status.endpoint}</code> is <strong>{status.state}</strong>.
        </p>
      )}
      {!status && !error && <p>Connecting…</p>}
    </main>
  );
}
