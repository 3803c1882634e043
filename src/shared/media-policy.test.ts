import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isHttpsOrigin, mediaDecision, mediaKind } from './media-policy.ts';

const PIXEL = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';

test('plain http media is never loaded, whatever the client allows', () => {
  for (const url of ['http://192.168.1.10/cam.jpg', 'http://127.0.0.1:9/x.png', 'HTTP://cdn.example.com/a.png', ' http://cdn.example.com/a.png ']) {
    const d = mediaDecision(url, ['https://cdn.example.com', 'http://cdn.example.com']);
    assert.equal(d.load, 'never', url);
    assert.equal(d.load === 'never' && d.reason, 'plain_http', url);
  }
  assert.deepEqual(mediaDecision('http://cdn.example.com/a b.png', []), { load: 'never', reason: 'plain_http', url: 'http://cdn.example.com/a%20b.png' });
});

test('https media waits for a click unless its origin is one of the client\'s mediaOrigins', () => {
  assert.deepEqual(mediaDecision('https://cdn.example.com/a.png', []), { load: 'on_click', src: 'https://cdn.example.com/a.png', origin: 'https://cdn.example.com' });
  assert.deepEqual(mediaDecision('https://cdn.example.com/a.png', ['https://cdn.example.com']), { load: 'inline', src: 'https://cdn.example.com/a.png' });
  assert.equal(mediaDecision('https://cdn.example.com:8443/a.png', ['https://cdn.example.com']).load, 'on_click', 'another port is another origin');
  assert.equal(mediaDecision('https://evil.example/a.png', ['https://cdn.example.com']).load, 'on_click');
  assert.equal(mediaDecision('https://cdn.example.com.evil.example/a.png', ['https://cdn.example.com']).load, 'on_click', 'no prefix matching');
  assert.equal(mediaDecision('https://user:pw@cdn.example.com/a.png', ['https://cdn.example.com']).load, 'inline', 'credentials do not change the origin');
  assert.equal(mediaDecision('HTTPS://CDN.Example.com/a.png', ['https://cdn.example.com']).load, 'inline', 'compared as URL origins, not text');
});

test('data: URLs stay inline; base64, other schemes and non-URLs are not loaded', () => {
  assert.deepEqual(mediaDecision(PIXEL, []), { load: 'inline', src: PIXEL });
  for (const content of ['R0lGODlhAQABAAAAACw=', 'file:///etc/passwd', 'javascript:alert(1)', 'ftp://x/y', '//cdn.example.com/a.png', '', undefined, 42]) {
    assert.deepEqual(mediaDecision(content, ['https://cdn.example.com']), { load: 'never', reason: 'not_a_url' }, String(content));
  }
});

test('mediaOrigins holds https origins only, spelled as URL.origin spells them', () => {
  for (const ok of ['https://cdn.example.com', 'https://cdn.example.com:8443', 'https://[::1]', 'https://xn--fsq.example']) assert.ok(isHttpsOrigin(ok), ok);
  for (const bad of ['http://cdn.example.com', 'https://cdn.example.com/', 'https://cdn.example.com/path', 'https://CDN.example.com', 'cdn.example.com', 'https://*.example.com', 'https://cdn.example.com:443', '']) {
    assert.ok(!isHttpsOrigin(bad), bad);
  }
});

test('file types map to how the attachment is shown', () => {
  assert.equal(mediaKind('image'), 'image');
  assert.equal(mediaKind('image/png'), 'image');
  assert.equal(mediaKind('voice'), 'audio');
  assert.equal(mediaKind('audio/mpeg'), 'audio');
  assert.equal(mediaKind('pdf'), 'file');
  assert.equal(mediaKind(3), 'file');
  assert.equal(mediaKind(undefined), 'file');
});
