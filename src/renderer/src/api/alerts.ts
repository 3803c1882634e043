import { isDesktop } from './bridge.ts';

/**
 * How the browser console gets the operator's attention: Web Notifications once the operator
 * allowed them (the desktop window leaves notifications to main, which shows native ones), and a
 * short chime made with WebAudio, so there is no sound file to load or to allow in the CSP.
 */

/** 'desktop': main notifies; 'unsupported': no Notification API here (e.g. plain http on a LAN address). */
export type NotifyPermission = NotificationPermission | 'desktop' | 'unsupported';

export function notifyPermission(): NotifyPermission {
  if (isDesktop) return 'desktop';
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.permission;
}

/** Asks the browser; only ever called from the operator's click on "Enable alerts". */
export async function requestNotifyPermission(): Promise<NotifyPermission> {
  if (notifyPermission() !== 'default') return notifyPermission();
  return Notification.requestPermission();
}

/** Shows one notification per conversation (a newer one replaces it); a click opens the conversation. */
export function showNotification(title: string, body: string, conversationId: string, onClick: () => void): void {
  if (notifyPermission() !== 'granted') return;
  let n: Notification;
  try {
    n = new Notification(title, { body, tag: `sb-alert-${conversationId}` });
  } catch {
    return; // the browser refused after all: the live region and the chime still tell
  }
  n.onclick = () => {
    window.focus();
    onClick();
    n.close();
  };
}

let audio: AudioContext | null = null;

/** Creates (or wakes) the audio context: call it from a click, which browsers require before sound. */
export function unlockSound(): void {
  audio ??= new AudioContext();
  if (audio.state === 'suspended') void audio.resume();
}

/** Two short falling tones, about 0.35 s. */
export function playChime(): void {
  unlockSound();
  const ctx = audio!;
  const start = ctx.currentTime + 0.01;
  for (const [i, freq] of [880, 660].entries()) {
    const at = start + i * 0.16;
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = 'sine';
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(0.25, at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.15);
    osc.connect(gain).connect(ctx.destination);
    osc.start(at);
    osc.stop(at + 0.16);
  }
}
