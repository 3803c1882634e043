import { LIMITS } from './message-schema.ts';

export type FileContentKind = 'url' | 'data_url' | 'base64';

export type FileContentCheck =
  | { ok: true; kind: FileContentKind; decodedBytes: number | null }
  | { ok: false; tooLarge: boolean; message: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$|^[A-Za-z0-9_-]*={0,2}$/;

function base64DecodedLength(s: string): number {
  let pad = 0;
  if (s.endsWith('==')) pad = 2;
  else if (s.endsWith('=')) pad = 1;
  return Math.floor(((s.length - pad) * 3) / 4);
}

function sizeCheck(kind: FileContentKind, bytes: number): FileContentCheck {
  if (bytes > LIMITS.fileDecodedMaxBytes) {
    return { ok: false, tooLarge: true, message: `is ${bytes} bytes once decoded; the limit is ${LIMITS.fileDecodedMaxBytes}` };
  }
  return { ok: true, kind, decodedBytes: bytes };
}

/**
 * files_info[].content is an http(s) URL, a data: URL or plain base64. The size is computed
 * from the encoded length so a 5 MiB file is never decoded just to be measured.
 */
export function checkFileContent(content: string): FileContentCheck {
  if (content.startsWith('data:')) {
    const comma = content.indexOf(',');
    if (comma < 0) return { ok: false, tooLarge: false, message: 'is a data: URL without a comma before its data' };
    const meta = content.slice(5, comma);
    const data = content.slice(comma + 1);
    if (meta.endsWith(';base64')) {
      if (!BASE64.test(data)) return { ok: false, tooLarge: false, message: 'is a data: URL marked base64 whose data is not base64' };
      return sizeCheck('data_url', base64DecodedLength(data));
    }
    return sizeCheck('data_url', percentEncodedBytes(data));
  }
  if (/^https?:\/\//i.test(content)) {
    if (!URL.canParse(content)) return { ok: false, tooLarge: false, message: 'is not a valid http(s) URL' };
    return { ok: true, kind: 'url', decodedBytes: null };
  }
  if (content.length > 0 && content.length % 4 !== 1 && BASE64.test(content)) {
    return sizeCheck('base64', base64DecodedLength(content));
  }
  return { ok: false, tooLarge: false, message: 'must be an http(s) URL, a data: URL or base64' };
}

/** Byte length of percent-encoded data without decoding it (each %XX is one byte). */
function percentEncodedBytes(data: string): number {
  let bytes = 0;
  for (let i = 0; i < data.length; i++) {
    if (data.charCodeAt(i) === 37 /* % */) i += 2;
    bytes++;
  }
  return bytes;
}
