import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { mediaDecision, mediaKind, type MediaKind } from '../../../shared/media-policy.ts';
import { assertNever } from '../../../shared/assert-never.ts';

interface FileInfo {
  content?: unknown;
  file_type?: unknown;
  file_name?: unknown;
}

function Media({ kind, src, name }: { kind: MediaKind; src: string; name: string }) {
  switch (kind) {
    case 'image':
      return <img src={src} alt={name} className="thumb" referrerPolicy="no-referrer" />;
    case 'audio':
      return <audio controls src={src} />;
    case 'file':
      return (
        <a href={src} target="_blank" rel="noreferrer">
          {name}
        </a>
      );
    default:
      return assertNever(kind, 'media kind');
  }
}

/** One attachment, loaded only as src/shared/media-policy.ts allows. */
function Attachment({ file, index, cut, mediaOrigins }: { file: FileInfo; index: number; cut: boolean; mediaOrigins: readonly string[] }) {
  const { t } = useTranslation();
  const [asked, setAsked] = useState(false);
  const type = String(file.file_type ?? '');
  const kind = mediaKind(file.file_type);
  const name = typeof file.file_name === 'string' && file.file_name ? file.file_name : `${type || 'file'} ${index + 1}`;
  const label = type ? `${name} (${type})` : name;
  // Cut in the transcript (a large data: URL): only the whole message holds it.
  if (cut) {
    return (
      <span className="file" data-testid="media-cut">
        {label} <small>· {t('transcript.media.cut')}</small>
      </span>
    );
  }
  const decision = mediaDecision(file.content, mediaOrigins);
  switch (decision.load) {
    case 'inline':
      return <Media kind={kind} src={decision.src} name={name} />;
    case 'on_click':
      // A link fetches nothing until it is clicked: only media elements wait for "Load".
      if (asked || kind === 'file') return <Media kind={kind} src={decision.src} name={name} />;
      return (
        <div className="file" data-testid="media-on-click">
          <span>{label}</span>
          <code>{decision.src}</code>
          <button className="mini" onClick={() => setAsked(true)} title={t('transcript.media.loadFrom', { origin: decision.origin })}>
            {t('transcript.media.load')}
          </button>
        </div>
      );
    case 'never':
      if (decision.reason === 'plain_http') {
        return (
          <div className="file" data-testid="media-plain-http">
            <span>{label}</span>
            <code>{decision.url}</code>
            <small>{t('transcript.media.plainHttp')}</small>
          </div>
        );
      }
      return <span className="file">{label}</span>;
    default:
      return assertNever(decision, 'media decision');
  }
}

/** `cut`: the paths the transcript cut (TranscriptEntry's stored.cut). */
export function Attachments({ info, cut = [], mediaOrigins }: { info: Record<string, unknown> | undefined; cut?: readonly string[]; mediaOrigins: readonly string[] }) {
  const files = Array.isArray(info?.['files_info']) ? (info['files_info'] as FileInfo[]) : [];
  if (files.length === 0) return null;
  return (
    <div className="files">
      {files.map((f, i) => (
        <Attachment key={i} file={f ?? {}} index={i} cut={cut.includes(`files_info[${i}].content`)} mediaOrigins={mediaOrigins} />
      ))}
    </div>
  );
}
